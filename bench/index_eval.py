"""Indexing speed on real markdown: all of ../shared/eval/markdown, read in place.

    python bench/index_eval.py [--corpus PATH] [--runs 3]

Prints the time of a full index into a fresh archive and of a no-op re-index,
with the targets (full <= 10 s, no-op <= 0.5 s) and the ratio to each.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from archivist.archive.indexer import index_workspace

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "eval" / "markdown"


def timed(workspace: Path, db_path: Path) -> tuple[float, str]:
    started = time.perf_counter()
    summary = index_workspace(workspace, db_path)
    return time.perf_counter() - started, summary.line()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    files = sum(1 for p in args.corpus.rglob("*") if p.is_file())
    megabytes = sum(p.stat().st_size for p in args.corpus.rglob("*") if p.is_file()) / 1e6
    print(f"corpus: {args.corpus} ({files} files, {megabytes:.1f} MB)")
    full, noop = [], []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            db_path = Path(tmp) / "archive.db"
            seconds, line = timed(args.corpus, db_path)
            full.append(seconds)
            print(f"  run {run + 1}: full index {seconds:.2f}s: {line}")
            for _ in range(3):
                seconds, line = timed(args.corpus, db_path)
                noop.append(seconds)
            print(f"  run {run + 1}: no-op re-index {seconds:.3f}s: {line}")
    full_median, noop_median = statistics.median(full), statistics.median(noop)
    print(f"full index:     median {full_median:.2f}s   target <= 10 s   ({full_median / 10:.2f} of target)")
    print(f"no-op re-index: median {noop_median:.3f}s  target <= 0.5 s  ({noop_median / 0.5:.2f} of target)")


if __name__ == "__main__":
    main()
