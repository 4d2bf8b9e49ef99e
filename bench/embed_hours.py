"""How long embedding a heavy user's agent logs takes: what is embedded, and how fast.

    python bench/embed_hours.py [--megabytes 50] [--texts 256] [--rounds 2] [--scale-megabytes 1103]

Writes --megabytes MB of bench/agentlog_index.py's Claude Code sessions, indexes them, and
counts the chunks (the project's chunker) of what is embedded, a session's user and assistant
text (``document_texts``), against what embedding every message's text would take, tool output
and thinking included. Times the float32 export and the int8 graph (onnx_model.WEIGHTS) on
--texts of those chunks, in alternating rounds (the best of each: float32 in passes of 32 texts,
as before; int8 as the embedding run passes them now: a text a pass on one thread, passes side by
side on each usable core, ``onnx_model.bulk_workers``), and prints the hours that
embedding --scale-megabytes MB of such logs (the 1.1 GB of bench/agentlog_index.py) takes:
every text at float32, as before, and what is embedded now at int8.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentlog_index import scratch, write_sessions

from archivist.archive import packed
from archivist.archive.database import sqlite3
from archivist.archive.indexer import index_workspace
from archivist.semantic import chunking, onnx_model
from archivist.workspace import archive_path

EMBEDDED_SQL = (
    "SELECT title, body FROM document_texts WHERE id IN (SELECT id FROM documents WHERE kind = 'conversation')"
)
# every message's text, its thinking and its tool output (stored packed: read through ``packed``), as one text a session
EVERYTHING_SQL = """
SELECT d.title, (SELECT group_concat(m.role || ': ' || m.text || char(10) || archivist_text(m.thinking) || char(10) || archivist_text(m.tool_output),
                                     char(10) || char(10))
                 FROM messages m WHERE m.document_id = d.id)
FROM documents d WHERE d.kind = 'conversation'
"""


def chunks(db_path: Path, sql: str) -> list[str]:
    with closing(sqlite3.connect(db_path)) as conn:
        packed.register(conn)
        return [piece.text for title, body in conn.execute(sql) for piece in chunking.chunk(body or "", title)]


def rate(encoder: onnx_model.Encoder, texts: list[str], batch_size: int, threads: int, workers: int) -> float:
    started = time.perf_counter()
    encoder.encode(texts, batch_size=batch_size, threads=threads, workers=workers)
    return len(texts) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=50)
    parser.add_argument("--texts", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--scale-megabytes", type=int, default=1103)
    args = parser.parse_args()
    rng = random.Random(42)
    root = Path(tempfile.mkdtemp(prefix="archivist-embed-hours-"))
    try:
        workspace, project = scratch(root)
        write_sessions(project, rng, max(1, args.megabytes * 2), args.megabytes)  # about 500 KB each, as the bench's
        size = sum(path.stat().st_size for path in project.glob("*.jsonl")) / 1e6
        index_workspace(workspace, log_sources=[("claude-code", root / "projects")])
        embedded = chunks(archive_path(workspace), EMBEDDED_SQL)
        everything = chunks(archive_path(workspace), EVERYTHING_SQL)
        print(f"{size:.0f} MB of sessions: {len(embedded):,} chunks embedded (user and assistant text), "
              f"{len(everything):,} with tool output and thinking ({len(embedded) / len(everything):.0%})")  # fmt: skip

        source = onnx_model.source_dir()
        float32 = onnx_model.Encoder(onnx_model.ensure_model(source, "float32"), source)
        int8 = onnx_model.Encoder(onnx_model.ensure_model(source, "int8"), source)
        # before: the float32 export in passes of 32 texts on ONNX Runtime's pool; now: the int8 graph
        # a text a pass (BATCH_SIZE) on one thread, passes side by side
        now = (onnx_model.BATCH_SIZE, onnx_model.BULK_THREADS, onnx_model.bulk_workers())
        encoders = {"float32": (float32, (32, 0, 1)), "int8": (int8, now)}
        sample = random.Random(1).sample(everything, min(args.texts, len(everything)))
        for encoder, _passes in encoders.values():
            encoder.encode(sample[:16])  # warm
        rates: dict[str, list[float]] = {name: [] for name in encoders}
        for _round in range(args.rounds):
            for name, (encoder, passes) in encoders.items():
                rates[name].append(rate(encoder, sample, *passes))
        best = {name: max(values) for name, values in rates.items()}
        for name, values in rates.items():
            print(f"{name:<8} {best[name]:.1f} chunks/s (rounds: {', '.join(f'{v:.1f}' for v in values)})")
        print(f"int8 over float32: {best['int8'] / best['float32']:.2f}x")
        scale = args.scale_megabytes / size
        before = len(everything) * scale / best["float32"] / 3600
        after = len(embedded) * scale / best["int8"] / 3600
        print(f"embedding {args.scale_megabytes:,} MB of such logs: every text at float32 {before:.1f} h; "
              f"user and assistant text at int8 {after:.1f} h ({before / after:.1f}x less)")  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
