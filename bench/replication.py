"""The archive replicated with Litestream: how soon a commit reaches the replica, how long a restore
takes, and how many bytes the replica holds against the archive.

On a copy of the sample workspace's archive and on one of --sessions generated Claude Code
sessions (bench/agentlog_index.py's, --megabytes of logs in all), replicated to a folder and,
with --s3, to a local S3 server (moto's, started here): the time to the first whole copy, then
--commits commits a few hundred milliseconds apart, each timed from its COMMIT to the moment its
LTX file is listed in the replica (Litestream ships every SYNC_INTERVAL), then a restore
(`archivist.replication.restore`, checked with SQLite's integrity check) and the bytes of each.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from archivist import replication  # noqa: E402
from archivist.archive.database import archive_size  # noqa: E402
from archivist.archive.indexer import index_workspace  # noqa: E402
from archivist.workspace import archive_path  # noqa: E402

BUCKET = "bench"


def folder_listing(folder: Path) -> Callable[[], tuple[int, int, int]]:
    """How many LTX files of level 0 the folder replica holds, how many files in all, and its bytes."""

    def listed() -> tuple[int, int, int]:
        level0 = folder / "ltx" / "0"
        files = [path for path in folder.rglob("*") if path.is_file()] if folder.exists() else []
        return (len(list(level0.iterdir())) if level0.is_dir() else 0), len(files), sum(f.stat().st_size for f in files)

    return listed


def s3_listing(client: object, prefix: str) -> Callable[[], tuple[int, int, int]]:
    """The same for an S3 replica under ``prefix``."""

    def listed() -> tuple[int, int, int]:
        count, files, size = 0, 0, 0
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)  # type: ignore[attr-defined]
        for page in pages:
            for item in page.get("Contents", []):
                size += item["Size"]
                files += 1
                count += item["Key"].startswith(f"{prefix}/0000/")  # level 0 (a folder replica: ltx/0/)
        return count, files, size

    return listed


def wait_for(listed: Callable[[], tuple[int, int, int]], more_than: int, patience: float = 30.0, at: int = 0) -> float:
    """Seconds until the replica lists more than ``more_than`` level-0 files (``at``=1: files of any level)."""
    start = time.perf_counter()
    while listed()[at] <= more_than:
        if time.perf_counter() - start > patience:
            raise TimeoutError("the replica did not catch up")
        time.sleep(0.005)
    return time.perf_counter() - start


def run(
    label: str, archive: Path, found: replication.Replica, listed: Callable[[], tuple[int, int, int]], commits: int
) -> None:
    rng = random.Random(3)
    conn = sqlite3.connect(archive)
    conn.execute("CREATE TABLE IF NOT EXISTS bench_marks (at REAL)")
    conn.commit()
    earlier = conn.execute("SELECT count(*) FROM bench_marks").fetchone()[0]  # (another replica's run)
    with replication.replicating(archive, found):
        first = wait_for(listed, 0, patience=120, at=1)
        lags = []
        for _ in range(commits):
            time.sleep(rng.uniform(0.1, 0.6))
            before = listed()[0]
            conn.execute("INSERT INTO bench_marks VALUES (?)", [time.time()])
            conn.commit()
            lags.append(wait_for(listed, before) * 1000)
    conn.close()
    replica_bytes = listed()[2]
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "restored.db"
        start = time.perf_counter()
        replication.restore(found, out)
        restore_s = time.perf_counter() - start
        check = sqlite3.connect(out)
        ok = check.execute("PRAGMA integrity_check").fetchone()[0]
        marks = check.execute("SELECT count(*) FROM bench_marks").fetchone()[0] - earlier
        check.close()
        restored = out.stat().st_size
    size = archive_size(archive)
    print(
        f"{label}: archive {size / 1e6:.1f} MB; first whole copy {first:.2f} s; "
        f"lag commit→replica over {commits} commits: median {statistics.median(lags):.0f} ms, "
        f"max {max(lags):.0f} ms (sync interval {replication.SYNC_INTERVAL}); "
        f"restore {restore_s:.2f} s ({restored / 1e6:.1f} MB, integrity {ok}, {marks}/{commits} commits there); "
        f"replica {replica_bytes / 1e6:.2f} MB = {replica_bytes / size:.2f}× the archive"
    )


def archives(root: Path, sessions: int, megabytes: float) -> list[tuple[str, Path]]:
    """The sample workspace's archive, and one of generated sessions (when ``sessions``)."""
    sample = root / "sample"
    shutil.copytree(ROOT / "sample-workspace", sample, ignore=shutil.ignore_patterns(".archivist"))
    index_workspace(sample)
    found = [("sample", archive_path(sample))]
    if sessions:
        import agentlog_index

        workspace, project = agentlog_index.scratch(root / "generated")
        agentlog_index.write_sessions(project, random.Random(1), sessions, megabytes)
        index_workspace(workspace, log_sources=[("claude-code", project.parent)])
        found.append((f"{sessions} sessions ({megabytes:g} MB of logs)", archive_path(workspace)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=500, help="generated sessions (0: the sample only)")
    parser.add_argument("--megabytes", type=float, default=50.0, help="their logs' size in all")
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--s3", action="store_true", help="also replicate to a local S3 server (moto)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        server = client = None
        if args.s3:
            import logging

            import boto3
            from moto.server import ThreadedMotoServer

            server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
            logging.getLogger("werkzeug").setLevel(logging.ERROR)
            server.start()
            endpoint = f"http://127.0.0.1:{server._server.server_port}"  # type: ignore[union-attr]
            os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench")
            client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
            client.create_bucket(Bucket=BUCKET)
        for number, (label, archive) in enumerate(archives(root, args.sessions, args.megabytes)):
            folder = root / f"replica-{number}"
            run(f"{label} → folder", archive, replication.replica(str(folder)), folder_listing(folder), args.commits)
            if client is not None:
                prefix = f"replica-{number}"
                found = replication.replica(f"s3://{BUCKET}/{prefix}", endpoint)
                run(f"{label} → S3 (moto)", archive, found, s3_listing(client, prefix), args.commits)
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
