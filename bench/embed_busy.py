"""Embedding on an idle and on a busy machine: chunks per CPU-second and wall time.

    python bench/embed_busy.py [--corpus DIR] [--files 296] [--rounds 2] [--spinners 2] [--before CHECKOUT]
                               [--workers N ...]

Chunks the markdown files of --corpus (the first --files of them by path; the project's chunker)
and embeds the chunks as the embedding run does (``model.encode``, ``model.CALL_SIZE`` texts a
call), in a process of its own, once on the machine as it is ("idle") and once while --spinners
processes (``while True: pass``, started and killed here) keep the cores busy ("busy"). With
--before, a checkout of an earlier commit is measured the same way, interleaved with this one
(its ``archivist`` first on PYTHONPATH); each --workers N measures this checkout once more with N
forward passes side by side instead of ``onnx_model.bulk_workers()``. Prints each run's wall and CPU seconds, chunks per
CPU-second and the load average, then the medians, busy over idle, and after over before.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "eval" / "markdown" / "humanlayer-thoughts"
SPINNER = "while True: pass"


def measure(corpus: Path, files: int, workers: int) -> dict[str, float]:
    """One run in this process: chunk the files, warm the model, then embed every chunk (``workers``
    passes side by side where not 0)."""
    from archivist.semantic import chunking, model, onnx_model

    if workers:
        onnx_model.bulk_workers = lambda: workers

    paths = sorted(corpus.rglob("*.md"))[:files]
    texts = [piece.text for path in paths for piece in chunking.chunk(path.read_text(errors="replace"), path.stem)]
    model.encode(texts[:4])
    cpu, wall = time.process_time(), time.perf_counter()
    for start in range(0, len(texts), model.CALL_SIZE):
        model.encode(texts[start : start + model.CALL_SIZE])
    return {
        "files": len(paths),
        "chunks": len(texts),
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
    }


def run(checkout: Path, workers: int, args: argparse.Namespace, spinners: int) -> dict[str, float]:
    """A child process measuring ``checkout``'s embedding, with ``spinners`` busy processes beside it."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "HF_HUB_OFFLINE": "1"}
    busy = [subprocess.Popen([sys.executable, "-c", SPINNER]) for _ in range(spinners)]
    try:
        command = [sys.executable, __file__, "--child", "--corpus", str(args.corpus), "--files", str(args.files)]
        command += ["--workers", str(workers)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        figures["load"] = os.getloadavg()[0]
        return figures
    finally:
        for process in busy:
            process.kill()
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--files", type=int, default=296)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--spinners", type=int, default=2)
    parser.add_argument("--before", type=Path, help="a checkout of an earlier commit, measured in turn with this one")
    parser.add_argument("--workers", type=int, action="append", default=[], help="passes side by side, measured too")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.corpus, args.files, args.workers[0] if args.workers else 0)))
        return
    if not args.corpus.is_dir():
        parser.error(f"no corpus folder at {args.corpus}")
    checkouts = {"after": (ROOT, 0)} | {f"after-{n}": (ROOT, n) for n in args.workers if n > 0}
    if args.before:
        checkouts["before"] = (args.before.resolve(), 0)
    conditions = {"idle": 0, "busy": args.spinners}
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    for round_ in range(args.rounds):
        for name, (checkout, workers) in checkouts.items():
            for condition, spinners in conditions.items():
                figures = run(checkout, workers, args, spinners)
                runs.setdefault((name, condition), []).append(figures)
                print(f"round {round_ + 1} {name:<8} {condition}: {figures['chunks']} chunks of {figures['files']} "
                      f"files, wall {figures['wall']:.1f} s, CPU {figures['cpu']:.1f} s, "
                      f"{figures['chunks'] / figures['cpu']:.1f} chunks/CPU-s, load {figures['load']:.1f}", flush=True)  # fmt: skip
    medians: dict[tuple[str, str], dict[str, float]] = {}
    for key, values in runs.items():
        medians[key] = {
            "wall": statistics.median(v["wall"] for v in values),
            "per_cpu": statistics.median(v["chunks"] / v["cpu"] for v in values),
        }
        print(f"median {key[0]:<8} {key[1]}: wall {medians[key]['wall']:.1f} s, "
              f"{medians[key]['per_cpu']:.1f} chunks/CPU-s")  # fmt: skip
    for name in checkouts:
        ratio = medians[(name, "busy")]["wall"] / medians[(name, "idle")]["wall"]
        print(f"{name}: busy wall / idle wall {ratio:.2f}x (target <= 1.5x)")
    if args.before:
        for condition in conditions:
            after, before = medians[("after", condition)], medians[("before", condition)]
            print(f"{condition}: after / before chunks/CPU-s {after['per_cpu'] / before['per_cpu']:.2f}x, "
                  f"wall {after['wall'] / before['wall']:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
