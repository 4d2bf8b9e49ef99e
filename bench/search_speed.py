"""search_workspace latency at scale, against ripgrep over the same files.

    python bench/search_speed.py [--conversations 100000] [--seed 42] [--repeat 5]

Generates (once) a seeded synthetic workspace under bench/out/, indexes it,
then times the search_workspace canned query with and without a date_range,
and `rg -i -l` (what the seed system ran) for the same queries over the same
files. Prints p50/p95 for each and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth import TOPICS, generate

from archivist.archive.indexer import index_workspace
from archivist.queries.catalog import sql_for
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

OUT = Path(__file__).resolve().parent / "out"


def queries(seed: int, count: int = 20) -> list[tuple[str, str]]:
    """(query, date_range) pairs: single words and pairs, months and days."""
    rng = random.Random(seed)
    chosen = []
    for n in range(count):
        topic = TOPICS[rng.choice(list(TOPICS))]
        query = rng.choice(topic) if n % 2 else " ".join(rng.sample(topic, 2))
        year, month, day = rng.randint(2023, 2025), rng.randint(1, 12), rng.randint(1, 28)
        date_range = f"{year}-{month:02d}" if n % 3 else f"{year}-{month:02d}-{day:02d}"
        chosen.append((query, date_range))
    return chosen


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def time_archive(archive: Archive, cases: list[tuple[str, str]], with_dates: bool, repeat: int) -> list[float]:
    times = []
    for query, date_range in cases:
        params = {"query": query, "date_range": date_range if with_dates else ""}
        for _ in range(repeat):
            started = time.perf_counter()
            archive.run("search_workspace", params)
            times.append((time.perf_counter() - started) * 1000)
    return times


def rg_command(workspace: Path, query: str, date_range: str) -> list[str]:
    # The seed system's search: case-insensitive, files with matches, a date glob.
    command = ["rg", "-i", "-l", "--fixed-strings", query]
    if date_range:
        glob = f"{date_range}*/**" if len(date_range) == 7 else f"{date_range}/**"
        command += ["--glob", glob]
    return command + [str(workspace)]


def time_rg(workspace: Path, cases: list[tuple[str, str]], with_dates: bool) -> list[float]:
    times = []
    for query, date_range in cases:
        started = time.perf_counter()
        subprocess.run(
            rg_command(workspace, query, date_range if with_dates else ""), stdout=subprocess.DEVNULL, check=False
        )
        times.append((time.perf_counter() - started) * 1000)
    return times


def report(label: str, times: list[float]) -> float:
    p50 = statistics.median(times)
    print(f"  {label:<38} p50 {p50:8.2f} ms   p95 {percentile(times, 0.95):8.2f} ms   (n={len(times)})")
    return p50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    workspace = OUT / f"synth-{args.conversations}-{args.seed}"
    started = time.perf_counter()
    generate(workspace, args.conversations, args.seed)
    print(f"workspace: {args.conversations} conversations ({time.perf_counter() - started:.1f}s to generate or check)")
    started = time.perf_counter()
    summary = index_workspace(workspace)
    print(f"index: {summary.line()} in {time.perf_counter() - started:.1f}s")

    cases = queries(args.seed)
    with Archive(archive_path(workspace)) as archive:
        plan = archive.conn.execute(
            "explain query plan " + sql_for("search_workspace"),
            {"query": cases[0][0], "date_range": cases[0][1], "conversation_type": "", "limit": ""},
        ).fetchall()
        print("query plan (search_workspace):")
        for row in plan:
            print(f"    {row[3]}")
        print(f"search_workspace over {summary.documents} documents, {len(cases)} queries x {args.repeat}:")
        filtered = report("archive, with date_range", time_archive(archive, cases, True, args.repeat))
        unfiltered = report("archive, no date_range", time_archive(archive, cases, False, args.repeat))
    if shutil.which("rg") is None:
        print("ripgrep (rg) is not installed: no comparison (apt-get install ripgrep)")
        return
    print(f"ripgrep over the same {args.conversations} files, same queries:")
    rg_filtered = report("rg -i -l, date glob", time_rg(workspace, cases, True))
    rg_unfiltered = report("rg -i -l, no glob", time_rg(workspace, cases, False))
    print(
        f"speed-up of the median (target >= 50x): with date_range {rg_filtered / filtered:.0f}x, "
        f"without {rg_unfiltered / unfiltered:.0f}x"
    )
    print(f"target p50 <= 10 ms with filters: {'met' if filtered <= 10 else 'NOT met'} ({filtered:.2f} ms)")


if __name__ == "__main__":
    main()
