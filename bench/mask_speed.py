"""Masking secrets: throughput on real markdown and on agent-log text, against reading it.

Masks every markdown file of ../shared/eval/markdown (real notes, reports and chats), then
the texts of synthetic Claude Code sessions (bench/agentlog_index.py's generator: prompts,
answers, tool output, a secret now and then), with the archive's Masker (under a key, as
indexing runs it), and prints MB/s for each, with the time of `str.lower` over the same
text as a floor to compare with (one pass over the text in C).

    python bench/mask_speed.py [--repeat 3] [--megabytes 50]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from agentlog_index import session_lines

from archivist.secrets import Masker

EVAL = Path(__file__).resolve().parent.parent.parent / "shared" / "eval" / "markdown"


def markdown_texts() -> list[str]:
    return [path.read_text(encoding="utf-8", errors="replace") for path in sorted(EVAL.rglob("*.md"))]


def log_texts(megabytes: int) -> list[str]:
    """Every text a reader would hand to the masker: each line's message text, tool input and output."""
    rng = random.Random(11)
    texts: list[str] = []
    size = 0
    while size < megabytes * 1_000_000:
        for line in session_lines(rng, f"s{len(texts)}", 2_000_000):
            record = json.loads(line)
            content = record.get("message", {}).get("content")
            for block in content if isinstance(content, list) else [{"text": content}]:
                if isinstance(block, dict):
                    for value in (block.get("text"), block.get("thinking"), block.get("content"), block.get("input")):
                        if value:
                            text = value if isinstance(value, str) else json.dumps(value)
                            texts.append(text)
                            size += len(text)
    return texts


def timed(texts: list[str], repeat: int, work) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for text in texts:
            work(text)
        best = min(best, time.perf_counter() - started)
    return best


def report(name: str, texts: list[str], repeat: int) -> None:
    megabytes = sum(len(text.encode("utf-8")) for text in texts) / 1e6
    masker = Masker(b"bench key" * 4)
    masker.mask(texts[0])  # patterns compiled, the automaton built
    masking = timed(texts, repeat, masker.mask)
    lowering = timed(texts, repeat, str.lower)
    found = sum(masker.mask(text)[1] for text in texts)
    print(
        f"{name}: {megabytes:.1f} MB in {len(texts):,} texts, {found:,} secrets masked\n"
        f"  mask  {masking:.3f} s = {megabytes / masking:.0f} MB/s\n"
        f"  lower {lowering:.3f} s = {megabytes / lowering:.0f} MB/s (one pass in C)\n"
        f"  ratio mask / lower: {masking / lowering:.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--megabytes", type=int, default=50, help="of synthetic agent-log text")
    args = parser.parse_args()
    if EVAL.is_dir():
        report("../shared/eval/markdown", markdown_texts(), args.repeat)
    report("synthetic Claude Code sessions", log_texts(args.megabytes), args.repeat)


if __name__ == "__main__":
    main()
