from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from archivist.archive.indexer import index_workspace
from archivist.queries.runner import Archive
from archivist.web.app import make_datasette, start
from archivist.workspace import archive_path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample-workspace"
LOGS = ROOT / "sample-agent-logs"  # one sample source of every kind of agent log


def sample_source(kind: str) -> Path:
    """A kind's sample source: its registry entry names it (``sample``)."""
    from archivist.agents import registry

    return LOGS / registry.get(kind).sample


EVAL = ROOT.parent / "shared" / "eval"
ARTIFACTS = ROOT / "tests" / "artifacts"  # screenshots and plots the tests keep (not committed)


def free_port() -> int:
    """A port on loopback that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write_files(root: Path, files: dict[str, str | bytes]) -> Path:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def make_workspace(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    def make(files: dict[str, str | bytes]) -> Path:
        return write_files(tmp_path / "workspace", files)

    return make


@pytest.fixture(scope="module")
def workspace(request, tmp_path_factory) -> Path:
    """The test module's FILES, written and indexed once for all of its tests."""
    root = write_files(tmp_path_factory.mktemp(request.module.__name__), request.module.FILES)
    index_workspace(root)
    return root


@pytest.fixture(scope="module")
def archive(workspace: Path):
    with Archive.for_workspace(workspace) as archive:
        yield archive


@pytest.fixture(scope="session")
def embedded_sample(tmp_path_factory) -> Path:
    """The sample workspace indexed and embedded with the real model, once per session.

    Read-only for the tests that use it: copy it (or use sample_workspace) to change things.
    """
    from archivist.semantic.embeddings import embed_workspace

    workspace = tmp_path_factory.mktemp("embedded") / "sample"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    embed_workspace(workspace)
    return workspace


@pytest.fixture
async def embedded_datasette(embedded_sample: Path):
    return await started_datasette(archive_path(embedded_sample))


@pytest.fixture
def sample_workspace(tmp_path: Path) -> Path:
    """A private copy of the bundled sample workspace, indexed."""
    workspace = tmp_path / "sample"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    index_workspace(workspace)
    return workspace


@pytest.fixture
def sample_archive(sample_workspace: Path):
    with Archive.for_workspace(sample_workspace) as archive:
        yield archive


async def started_datasette(db_path: Path, plugin_settings: dict | None = None):
    """The app as `archivist serve` runs it: started before its first request."""
    return await start(make_datasette(db_path, plugin_settings))


@pytest.fixture
async def sample_datasette(sample_workspace: Path):
    return await started_datasette(archive_path(sample_workspace))


@pytest.fixture
def large(monkeypatch):
    """Every agent-log source counts as large; the newest three are stored first; commits are
    always due; the sessions are read in this process (where a test watches the reader), not in
    a worker process (which a monkeypatch does not reach)."""
    from archivist.archive import pace, sessions

    monkeypatch.setattr(pace, "LARGE_FILES", 5)
    monkeypatch.setattr(sessions, "NEWEST_FIRST", 3)
    monkeypatch.setattr(pace, "COMMIT_SECONDS", 0.0)
    monkeypatch.setattr(pace, "IN_WORKER", False)


ARCHIVIST = str(Path(sys.executable).parent / "archivist")  # this checkout's command


def on_small_disk(tmp_path: Path, script: str, env: dict[str, str], size: str = "1m") -> Path:
    """Run the shell ``script`` with a real file system that fills up: a tmpfs of ``size`` mounted
    at $DISK, in a user and mount namespace of its own. $OUT is the folder it writes its findings
    in (returned), $ARCHIVIST and $PYTHON run this checkout's; ``env`` adds to the environment.
    The test is skipped where no tmpfs can be mounted (no unshare, no user namespaces)."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare to mount a tmpfs with")
    disk, out = tmp_path / "disk", tmp_path / "out"
    disk.mkdir()
    out.mkdir()
    environment = {
        **os.environ,
        "DISK": str(disk),
        "OUT": str(out),
        "SIZE": size,
        "ARCHIVIST": ARCHIVIST,
        "PYTHON": sys.executable,
        "HF_HUB_OFFLINE": "1",
        **env,
    }
    mounted = 'set -u\nmount -t tmpfs -o size="$SIZE" tmpfs "$DISK" || exit 77\n' + script
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", mounted],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode == 77:
        pytest.skip(f"no tmpfs can be mounted here: {done.stderr.strip()[:200]}")
    assert done.returncode == 0, done.stderr[-2000:]
    return out
