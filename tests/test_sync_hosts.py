"""archivist sync --host: the agent logs of another machine read over SSH, tried against a real
SSH server (asyncssh) started here on a free port, whose sessions run /bin/sh with HOME set to a
remote home holding sample logs, driven by the system's ssh client."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import asyncssh
import pytest
from conftest import LOGS

from archivist import hosts
from archivist.workspace import archive_path

ARCHIVIST = str(Path(__file__).resolve().parent.parent / ".venv" / "bin" / "archivist")
HOMES = {"claude-code/projects": ".claude/projects", "codex/sessions": ".codex/sessions", "gemini-cli": ".gemini"}
pytestmark = pytest.mark.skipif(shutil.which("ssh") is None, reason="no ssh client")


class Server:
    """An SSH server on 127.0.0.1 in a thread of its own: each command run by /bin/sh in ``home``."""

    def __init__(self, home: Path, host_key: asyncssh.SSHKey, authorized: asyncssh.SSHKey) -> None:
        self.home, self.host_key, self.authorized = home, host_key, authorized
        self.loop = asyncio.new_event_loop()
        self.commands: list[str] = []
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait(10)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        keys = asyncssh.import_authorized_keys(self.authorized.export_public_key().decode())
        self.server = self.loop.run_until_complete(
            asyncssh.create_server(
                asyncssh.SSHServer,
                "127.0.0.1",
                0,
                server_host_keys=[self.host_key],
                authorized_client_keys=keys,
                process_factory=self._session,
                encoding=None,
            )
        )
        self.port = self.server.sockets[0].getsockname()[1]
        ready.set()
        self.loop.run_forever()

    async def _session(self, process: asyncssh.SSHServerProcess) -> None:
        self.commands.append(process.command or "")
        script = await process.stdin.read()
        shell = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            process.command or "sh",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={"HOME": str(self.home), "PATH": os.environ["PATH"]},
        )
        assert shell.stdin is not None and shell.stdout is not None and shell.stderr is not None
        shell.stdin.write(script)
        shell.stdin.close()
        while chunk := await shell.stdout.read(65536):
            process.stdout.write(chunk)
            await process.stdout.drain()
        process.stderr.write(await shell.stderr.read())
        process.exit(await shell.wait())

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[tuple[Server, dict[str, str]]]:
    """A remote home holding sample logs of three kinds, served over SSH, and the environment whose ssh reaches it."""
    home = tmp_path / "remote-home"
    for sample, place in HOMES.items():
        shutil.copytree(LOGS / sample, home / place)
    client = asyncssh.generate_private_key("ssh-ed25519")
    key_file = tmp_path / "id_ed25519"
    key_file.write_bytes(client.export_private_key())
    key_file.chmod(0o600)
    server = Server(home, asyncssh.generate_private_key("ssh-ed25519"), client)
    config = tmp_path / "ssh_config"
    config.write_text("")
    command = (
        f"ssh -F {config} -i {key_file} -o IdentitiesOnly=yes -o IdentityAgent=none -o UserKnownHostsFile=/dev/null"
        " -o StrictHostKeyChecking=no -o LogLevel=ERROR -o ConnectTimeout=3"
    )
    env = {**os.environ, hosts.SSH_VARIABLE: command, "HOME": str(tmp_path / "local-home")}
    (tmp_path / "local-home").mkdir()
    yield server, env
    server.close()


def archivist(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARCHIVIST, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)


def sessions_by_host(workspace: Path) -> dict[str | None, int]:
    db = sqlite3.connect(archive_path(workspace))
    try:
        rows = db.execute(
            "SELECT s.host, count(*) FROM documents d JOIN log_sources s ON d.source = 'log:' || s.id GROUP BY s.host"
        ).fetchall()
    finally:
        db.close()
    return dict(rows)


def sync(env: dict[str, str], workspace: Path, port: int, *more: str) -> subprocess.CompletedProcess[str]:
    return archivist(env, "sync", str(workspace), "--host", "127.0.0.1", "--port", str(port), "--user", "me", *more)


def test_a_host_is_synced_then_only_what_changed_is_brought_over(remote, tmp_path):
    server, env = remote
    workspace = tmp_path / "ws"
    workspace.mkdir()
    started = time.monotonic()
    first = sync(env, workspace, server.port)
    first_seconds = time.monotonic() - started
    assert first.returncode == 0, first.stderr
    assert "brought over" in first.stdout
    by_host = sessions_by_host(workspace)
    assert set(by_host) == {"127.0.0.1"} and by_host["127.0.0.1"] >= 3
    kept = archive_path(workspace).parent / "hosts" / "127.0.0.1" / "home"
    assert (kept / ".claude" / "projects").is_dir() and (kept / ".codex" / "sessions").is_dir()
    # the remote's home is never written
    listed_before = sorted(str(p) for p in server.home.rglob("*"))
    started = time.monotonic()
    again = sync(env, workspace, server.port)
    noop_seconds = time.monotonic() - started
    assert again.returncode == 0 and summary(again)["brought over"] == 0, again.stdout
    assert sorted(str(p) for p in server.home.rglob("*")) == listed_before
    print(f"first sync {first_seconds:.2f} s, no-op sync {noop_seconds:.2f} s, sessions {by_host}")
    # a line appended: that file alone comes over
    session = next((server.home / ".codex" / "sessions").rglob("*.jsonl"))
    with session.open("a", encoding="utf-8") as out:
        out.write(session.read_text(encoding="utf-8").splitlines()[-1] + "\n")
    appended = sync(env, workspace, server.port)
    assert appended.returncode == 0 and summary(appended)["brought over"] == 1, appended.stdout
    assert hosts_stored(workspace) == {"127.0.0.1"}  # (the session read on keeps its host)
    # a file deleted: its session goes
    before = sessions_by_host(workspace)["127.0.0.1"]
    session.unlink()
    deleted = sync(env, workspace, server.port)
    assert deleted.returncode == 0 and summary(deleted)["deleted"] == 1, deleted.stdout
    assert sessions_by_host(workspace)["127.0.0.1"] == before - 1
    assert not (kept / session.relative_to(server.home)).exists()
    status = archivist(env, "status", str(workspace))
    line = next(line for line in status.stdout.splitlines() if line.startswith("  127.0.0.1 "))
    told = json.loads(archivist(env, "status", str(workspace), "--json").stdout)["hosts"]
    assert [(h["host"], h["files"], h["problem"]) for h in told] == [("127.0.0.1", len(kept_files(kept)), None)]
    assert f"last synced {told[0]['synced_at']}, {told[0]['files']} files" in line and "failed" not in line


def summary(result: subprocess.CompletedProcess[str]) -> dict[str, int]:
    """The counts of the one summary line a sync printed: listed, brought over, deleted."""
    (line,) = [line for line in result.stdout.splitlines() if " listed, " in line]
    found = re.search(r"(\d+) files? listed, (\d+) brought over \(\d+ bytes\), (\d+) deleted", line)
    assert found, line
    return dict(zip(("listed", "brought over", "deleted"), map(int, found.groups()), strict=True))


def hosts_stored(workspace: Path) -> set[str | None]:
    """The hosts the sessions of synced sources carry in their facts."""
    db = sqlite3.connect(archive_path(workspace))
    try:
        rows = db.execute(
            "SELECT d.extra ->> 'host' FROM documents d JOIN log_sources s ON d.source = 'log:' || s.id"
            " WHERE s.host IS NOT NULL"
        ).fetchall()
    finally:
        db.close()
    return {row[0] for row in rows}


def kept_files(home: Path) -> list[Path]:
    return [path for path in home.rglob("*") if path.is_file()]


def test_the_same_sessions_read_here_and_from_a_host_do_not_collide(remote, tmp_path):
    server, env = remote
    workspace = tmp_path / "ws"
    workspace.mkdir()
    local = archivist(env, "index", str(workspace), "--source", f"claude-code={server.home / '.claude' / 'projects'}")
    assert local.returncode == 0, local.stderr
    here = sessions_by_host(workspace)[None]
    assert sync(env, workspace, server.port).returncode == 0
    counts = sessions_by_host(workspace)
    assert counts[None] == here and counts["127.0.0.1"] >= here


def ids_by_host(workspace: Path) -> dict[str | None, set[int]]:
    db = sqlite3.connect(archive_path(workspace))
    try:
        rows = db.execute(
            "SELECT s.host, d.id FROM documents d JOIN log_sources s ON d.source = 'log:' || s.id"
        ).fetchall()
    finally:
        db.close()
    found: dict[str | None, set[int]] = {}
    for host, id_ in rows:
        found.setdefault(host, set()).add(id_)
    return found


async def test_a_synced_session_is_found_by_its_host_and_its_pages_show_it(remote, tmp_path):
    from conftest import started_datasette

    from archivist.queries.runner import Archive

    server, env = remote
    workspace = tmp_path / "ws"
    workspace.mkdir()
    local = archivist(env, "index", str(workspace), "--source", f"claude-code={server.home / '.claude' / 'projects'}")
    assert local.returncode == 0, local.stderr
    assert sync(env, workspace, server.port).returncode == 0
    ids = ids_by_host(workspace)
    synced, here = ids["127.0.0.1"], ids[None]
    assert synced and here

    def search(**params: str) -> dict:
        with Archive.for_workspace(workspace) as archive:
            return archive.search({"mode": "recent", "page_size": "100", **params})

    assert {r["id"] for r in search(hosts="127.0.0.1")["results"]} == synced
    assert {r["id"] for r in search(hosts="127.0.0.1,no-such-host")["results"]} == synced
    assert search(hosts="127.0.0.2")["results"] == []
    for value in ("h:OR", "*", "x" * 2000, "127.0.0.1)", "127.0.0.1 OR 1"):
        assert search(hosts=value)["results"] == [], value
    assert search(hosts='"')["total"] == search()["total"]  # (no host named at all: no filter)
    full = search(output="full")
    assert full["total"] <= 200 and full["facets"]["host"] == {"127.0.0.1": len(synced)}
    assert {r["id"] for r in full["results"] if r.get("host") == "127.0.0.1"} == synced
    assert not any("host" in r for r in full["results"] if r["id"] not in synced)
    assert search(hosts="127.0.0.1", output="full")["filters"]["hosts"] == ["127.0.0.1"]
    listed = archivist(env, "search", str(workspace), "--mode", "recent", "--host", "127.0.0.1", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {r["id"] for r in json.loads(listed.stdout)["results"]} <= synced
    # the pages: the host beside a synced session's agent and on its hit, never on this machine's
    datasette = await started_datasette(archive_path(workspace))
    one, mine = min(synced), min(here)
    page = (await datasette.client.get(f"/document/{one}")).text
    assert re.search(
        r'<dt>Host</dt><dd class="archivist-host"><a href="[^"]*\?hosts=127.0.0.1"[^>]*>127.0.0.1</a>', page
    )
    assert "archivist-host" not in (await datasette.client.get(f"/document/{mine}")).text
    results = (await datasette.client.get("/search", params={"mode": "recent", "page_size": "100"})).text
    hits = dict(re.findall(r'<li class="archivist-hit" data-id="(\d+)">(.*?)</li>', results, re.S))
    assert {int(id_) for id_ in hits} == synced | here
    assert {int(id_) for id_, hit in hits.items() if 'class="badge host"' in hit} == synced
    narrowed = (await datasette.client.get("/search", params={"mode": "recent", "hosts": "127.0.0.1"})).text
    assert "host: 127.0.0.1" in narrowed and 'data-facet="host"' in narrowed


def test_a_refusing_host_and_a_silent_one_are_told_in_one_line_each_and_the_others_go_on(remote, tmp_path):
    server, env = remote
    workspace = tmp_path / "ws"
    workspace.mkdir()
    other = Server(
        server.home, asyncssh.generate_private_key("ssh-ed25519"), asyncssh.generate_private_key("ssh-ed25519")
    )
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        ports = {"refusing": other.port, "silent": silent.getsockname()[1], "good": server.port}
        (tmp_path / "ssh_config").write_text(  # aliases, as ~/.ssh/config names hosts
            "".join(f"Host {name}\n  HostName 127.0.0.1\n  Port {port}\n" for name, port in ports.items())
        )
        (workspace / "archivist.toml").write_text(
            '[[hosts]]\nhost = "refusing"\nuser = "me"\n\n[[hosts]]\nhost = "silent"\n\n'
            '[[hosts]]\nhost = "good"\nuser = "me"\n',
            encoding="utf-8",
        )
        started = time.monotonic()
        result = archivist(env, "sync", str(workspace))
        assert time.monotonic() - started < 30
    finally:
        other.close()
        silent.close()
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith("❌")]
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith("❌ refusing: unreachable (ssh exit 255)") and "ermission denied" in lines[0]
    assert lines[1].startswith("❌ silent: unreachable (ssh exit 255)")
    assert set(sessions_by_host(workspace)) == {"good"}
    status = archivist(env, "status", str(workspace)).stdout
    listed = status.split("Hosts:\n")[1].split("\n")
    told = {line.split()[0]: line for line in listed[: next(i for i, x in enumerate(listed) if not x.startswith("  "))]}
    assert set(told) == {"good", "refusing", "silent"}, status
    assert "last synced never, 0 files; last sync failed: unreachable (ssh exit 255)" in told["refusing"]
    assert "ermission denied" in told["refusing"] and "failed" not in told["good"]
    assert "last synced 20" in told["good"]


def test_what_a_failing_host_says_reaches_the_terminal_as_one_plain_line(remote, tmp_path):
    _, env = remote
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {**env, hosts.SSH_VARIABLE: "sh -c 'printf \"\\033]0;owned\\007\\033[31mno\\rway\\n\" >&2; exit 255' ssh"}
    result = sync(env, workspace, 22)
    assert result.returncode == 1
    status = archivist(env, "status", str(workspace), "--json")
    problem = json.loads(status.stdout)["hosts"][0]["problem"]
    assert problem.startswith("unreachable (ssh exit 255): ") and "\ufffd]0;owned\ufffd" in problem and "way" in problem
    for told in (result.stderr, archivist(env, "status", str(workspace)).stdout, problem):
        assert "\x1b" not in told and "\x07" not in told and "\r" not in told, told


@pytest.mark.parametrize("name", ["-oProxyCommand=touch /tmp/x", "a b", "a\nb", "..", "", "host/../x"])
def test_a_host_name_that_could_be_an_option_or_a_path_is_refused_before_anything_runs(remote, tmp_path, name):
    server, env = remote
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = archivist(env, "sync", str(workspace), "--host", name)
    assert result.returncode == 1 and "INVALID_PARAMETER" in result.stderr
    assert server.commands == [] and not archive_path(workspace).exists()


def test_hostile_names_on_the_remote_are_never_followed_nor_written_outside_the_sync_folder(remote, tmp_path):
    server, env = remote
    workspace = tmp_path / "ws"
    workspace.mkdir()
    projects = server.home / ".claude" / "projects"
    secret = tmp_path / "outside" / "secret.jsonl"
    secret.parent.mkdir()
    secret.write_text('{"secret": "never brought over"}\n', encoding="utf-8")
    (projects / "link-to-file.jsonl").symlink_to(secret)
    (projects / "link-to-folder").symlink_to(secret.parent)
    (projects / "new\nline.jsonl").write_text("{}\n", encoding="utf-8")
    (projects / "..dots..").mkdir()
    (projects / "..dots..").joinpath("x.jsonl").write_text("{}\n", encoding="utf-8")
    result = sync(env, workspace, server.port)
    assert result.returncode == 0, result.stderr
    kept = archive_path(workspace).parent / "hosts" / "127.0.0.1"
    files = [p for p in kept.rglob("*")]
    assert not any(p.is_symlink() for p in files)
    assert not any("secret" in p.name or "\n" in p.name for p in files)
    assert not any(p.name.startswith("link-to") for p in files)
    beside = {p.name for p in archive_path(workspace).parent.rglob("*") if p.is_file() and not p.is_relative_to(kept)}
    assert beside <= {"archive.db", "archive.db-wal", "archive.db-shm", "archive.db.mask-key"}
    assert sorted(p.name for p in secret.parent.iterdir()) == ["secret.jsonl"]
    assert (kept / "home" / ".claude" / "projects" / "..dots.." / "x.jsonl").is_file()


def test_a_hostile_listing_is_refused_name_by_name():
    listing = b"\n".join(
        [
            b"D .claude/projects",
            b"D ../etc",
            b"F 10 1 ./.claude/projects/a.jsonl",
            b"F 10 1 ./.claude/projects/../../etc/passwd",
            b"F 10 1 ./../etc/passwd",
            b"F 10 1 ./.claude/projects//x",
            b"F 10 1 /etc/passwd",
            b"F x 1 ./.claude/projects/b.jsonl",
            b"F 10 1 ./.codex/sessions/c.jsonl",
            b"F 10 1 ./.claude/projects/\x1b[31m.jsonl",
        ]
    )
    done = hosts.Synced("laptop")
    told = hosts.parse_listing(listing, [".claude/projects", ".codex/sessions"], done)
    assert told.found == [".claude/projects"] and told.incomplete == []
    assert told.files == {".claude/projects/a.jsonl": (10, 1)}
    assert done.refused == 7 and len(done.refused_names) == 7  # (a folder not asked for is left out)


def test_the_ssh_command_is_fixed_after_the_client_and_the_host_comes_after_a_double_dash():
    command = hosts.ssh_command(hosts.Host("laptop", "me", 2222), {hosts.SSH_VARIABLE: "ssh -F '/tmp/a b'"})
    assert command == [
        "ssh", "-F", "/tmp/a b", "-T", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={hosts.CONNECT_TIMEOUT}",
        "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4", "-o", "ControlPersist=no",
        "-o", "RemoteCommand=none", "-l", "me", "-p", "2222", "--", "laptop", "sh -s",
    ]  # fmt: skip


def test_a_source_of_a_host_read_in_a_worker_process_or_here_gives_its_sessions_that_host():
    from archivist import vocabulary
    from archivist.archive import session_worker
    from archivist.archive.prepared import Prepared

    source, problems = LOGS / "claude-code" / "projects", []
    word = next(key for key in vocabulary.KEYS if key.name == "host").word("laptop")  # (any case: lowered)
    ready = list(
        session_worker.prepared("claude-code", source, "log:1", {}, "2026-01-01T00:00:00Z", None, problems, 0, "Laptop")
    )
    rows = [item.rows for item in ready if isinstance(item, Prepared) and item.rows is not None]
    assert rows and all(json.loads(document["extra"])["host"] == "Laptop" for document, _ in rows)
    assert all(word in document["filter_tokens"].split() for document, _ in rows)
    here = [s for s in session_worker.read_here("claude-code", source, [], 0, "Laptop") if s is not None]
    assert here and {session.host for session in here} == {"Laptop"}
    assert {s.host for s in session_worker.read_here("claude-code", source, []) if s is not None} == {None}


# A hostile remote, played by tests/fake_ssh.py given as ARCHIVIST_SSH_COMMAND: it sends the
# listing and the tar stream its spec says, whatever was asked.
FAKE = Path(__file__).resolve().parent / "fake_ssh.py"
PYTHON = str(Path(ARCHIVIST).parent / "python")
SAMPLE = next((LOGS / "claude-code" / "projects").glob("*/*.jsonl")).read_text(encoding="utf-8")
A, B = ".claude/projects/p/a.jsonl", ".claude/projects/p/b.jsonl"


def listed(*names: str, size: int = len(SAMPLE), mtime: int = 100) -> list[str]:
    return ["D .claude/projects", *(f"F {size} {mtime} ./{name}" for name in names)]


def faked(tmp_path: Path, **spec: object) -> dict[str, str]:
    """The environment whose ssh is the fake one, answering with ``spec``."""
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    (tmp_path / "local-home").mkdir(exist_ok=True)
    return {
        **os.environ,
        hosts.SSH_VARIABLE: f"{PYTHON} {FAKE}",
        "FAKE_SSH_SPEC": str(path),
        "HOME": str(tmp_path / "local-home"),
    }


def fake_sync(env: dict[str, str], workspace: Path) -> subprocess.CompletedProcess[str]:
    workspace.mkdir(exist_ok=True)
    return archivist(env, "sync", str(workspace), "--host", "box", timeout=40)


def box(workspace: Path) -> Path:
    return archive_path(workspace).parent / "hosts" / "box"


def in_child(env: dict[str, str], workspace: Path, setting: str) -> tuple[str, float]:
    """What ``hosts.sync`` of the fake host ends with, run in a process of its own after ``setting``
    (its limits made small), and the seconds it took."""
    workspace.mkdir(exist_ok=True)
    program = (
        "import pathlib, sys\nfrom archivist import hosts\n" + setting + "\ntry:\n"
        "    done = hosts.sync(hosts.Host('box'), pathlib.Path(sys.argv[1]), 'now')\n"
        "    print('DONE', done.fetched, done.refused, done.problem)\n"
        "except hosts.HostFailed as error:\n    print('FAILED', error)\n"
    )
    started = time.monotonic()
    result = subprocess.run(
        [PYTHON, "-c", program, str(archive_path(workspace))], env=env, capture_output=True, text=True, timeout=30
    )
    return result.stdout + result.stderr, time.monotonic() - started


def test_a_remote_flooding_stderr_is_drained_and_its_ssh_runs_with_keepalives(tmp_path):
    argv = tmp_path / "argv.jsonl"
    members = [{"name": "./" + A, "data": SAMPLE}]
    env = faked(tmp_path, listing=listed(A), members=members, stderr=300_000, argv=str(argv))
    started = time.monotonic()
    result = fake_sync(env, tmp_path / "ws")
    assert time.monotonic() - started < 30
    assert result.returncode == 0 and summary(result)["brought over"] == 1, result.stderr
    assert (box(tmp_path / "ws") / "home" / A).read_text(encoding="utf-8") == SAMPLE
    calls = [json.loads(line) for line in argv.read_text(encoding="utf-8").splitlines()]
    assert [call["fetch"] for call in calls] == [False, True]
    for call in calls:
        options = call["argv"][: call["argv"].index("--")]
        assert "-T" in options
        for option in ("ServerAliveInterval=15", "ServerAliveCountMax=4", "ControlPersist=no", "RemoteCommand=none"):
            assert option in options
    assert "COPYFILE_DISABLE=1 tar -cf - " in calls[1]["script"]


def test_a_host_that_stalls_after_login_or_mid_stream_is_given_up_at_its_deadline(tmp_path):
    env = faked(tmp_path, listing=listed(A), list_sleep=3600)
    said, seconds = in_child(env, tmp_path / "ws", "hosts.LIST_TIMEOUT = 2")
    assert said.startswith("FAILED timed out after 2 s") and seconds < 15, said
    members = [{"name": "./" + A, "data": SAMPLE}, {"name": "./" + B, "data": SAMPLE}]
    env = faked(tmp_path, listing=listed(A, B), members=members, cut=len(SAMPLE) + 2500, sleep=3600)
    said, seconds = in_child(env, tmp_path / "ws", "hosts.FETCH_TIMEOUT = 2")
    assert said.startswith("DONE 1 0 ") and "timed out after 2 s" in said and seconds < 15, said
    assert not list(box(tmp_path / "ws").rglob("*archivist-new*"))


def test_members_not_asked_for_linked_escaping_duplicated_or_oversized_are_refused(tmp_path):
    outside = tmp_path / "ws" / ".archivist" / "x"
    members = [
        {"name": "./" + A, "data": SAMPLE},
        {"name": "./.claude/projects/p/other.jsonl", "data": "{}"},  # not asked for
        {"name": "./../x", "data": "{}"},
        {"name": "../x", "data": "{}"},
        {"name": "./" + B, "type": "symlink", "target": "/etc/passwd"},
        {"name": "./" + B, "type": "hardlink", "target": "/etc/passwd"},
        {"name": "./" + A, "data": "second copy"},  # duplicated
        {"name": "./.claude/projects/p/big.jsonl", "fill": 5_000_000},  # listed as 3 bytes
    ]
    listing = [*listed(A, B), "F 3 100 ./.claude/projects/p/big.jsonl"]
    result = fake_sync(faked(tmp_path, listing=listing, members=members), tmp_path / "ws")
    assert result.returncode == 0 and summary(result)["brought over"] == 1, result.stderr
    assert "7 names refused" in result.stdout, result.stdout
    home = box(tmp_path / "ws") / "home"
    assert (home / A).read_text(encoding="utf-8") == SAMPLE
    assert sorted(p.name for p in home.rglob("*") if not p.is_dir()) == ["a.jsonl"]
    assert not outside.exists() and not (tmp_path / "x").exists()


def test_bytes_past_the_sync_cap_and_a_listing_past_its_cap_stop_the_host(tmp_path):
    members = [{"name": "./" + A, "data": SAMPLE}, {"name": "./" + B, "data": SAMPLE}]
    env = faked(tmp_path, listing=listed(A, B), members=members)
    said, _ = in_child(env, tmp_path / "ws", f"hosts.SYNC_BYTES = {len(SAMPLE) + 10}")
    assert said.startswith("DONE 1 0 ") and "the most one sync brings over" in said, said
    env = faked(tmp_path, listing=listed(*(f".claude/projects/{n}.jsonl" for n in range(500))))
    said, _ = in_child(env, tmp_path / "ws2", "hosts.LISTING_LINES = 100")
    assert said.startswith("FAILED its listing is longer than 100 lines"), said
    env = faked(tmp_path, listing=["D .claude/projects", *(f"F 1 1 ./../{n}" for n in range(5000))])
    said, _ = in_child(env, tmp_path / "ws3", "")
    assert said.startswith("DONE 0 5000 None"), said


def test_a_name_not_in_utf8_is_kept_and_the_next_sync_still_works(tmp_path):
    name = ".claude/projects/p/\udce9t\udce9.jsonl"
    env = faked(tmp_path, listing=listed(name), members=[{"name": "./" + name, "data": SAMPLE}])
    first = fake_sync(env, tmp_path / "ws")
    assert first.returncode == 0 and summary(first)["brought over"] == 1, first.stderr
    again = fake_sync(env, tmp_path / "ws")
    assert again.returncode == 0 and summary(again)["brought over"] == 0, again.stderr
    assert os.path.isfile(os.fsencode(box(tmp_path / "ws") / "home") + b"/.claude/projects/p/\xe9t\xe9.jsonl")


def test_a_member_that_breaks_writing_is_one_line_and_the_other_hosts_go_on(tmp_path):
    members = [
        {"name": "./" + A, "data": SAMPLE, "pax": {"mtime": "nan"}},
        {"name": "./" + B + "/x", "data": "{}"},
        {"name": "./" + B, "data": SAMPLE},  # onto the folder just made
        {"name": "./.claude/projects/p/c.jsonl", "data": SAMPLE},
    ]
    listing = [*listed(A, B, B + "/x"), f"F {len(SAMPLE)} 100 ./.claude/projects/p/c.jsonl"]
    env = faked(tmp_path, listing=listing, members=members)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "archivist.toml").write_text('[[hosts]]\nhost = "box"\n\n[[hosts]]\nhost = "box2"\n')
    result = archivist(env, "sync", str(workspace))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.startswith("❌")]
    assert [line.split(":")[0] for line in lines] == ["❌ box", "❌ box2"], result.stderr
    assert "box:" in result.stdout and "box2:" in result.stdout
    assert not (box(workspace) / "home" / A).exists()  # (its time is not a time)


def test_a_second_sync_of_the_same_host_at_once_is_refused(tmp_path):
    import fcntl

    env = faked(tmp_path, listing=listed(A), members=[{"name": "./" + A, "data": SAMPLE}])
    folder = box(tmp_path / "ws")
    folder.mkdir(parents=True)
    with open(folder / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        result = fake_sync(env, tmp_path / "ws")
    assert result.returncode == 1 and "❌ box: another sync of this host is running" in result.stderr, result.stderr
    assert not (folder / "home" / A).exists()
    assert fake_sync(env, tmp_path / "ws").returncode == 0


def test_a_kept_file_changed_here_or_a_lost_state_is_repaired_from_the_files(tmp_path):
    members = [{"name": "./" + A, "data": SAMPLE}, {"name": "./" + B, "data": SAMPLE}]
    env = faked(tmp_path, listing=listed(A, B), members=members)
    assert fake_sync(env, tmp_path / "ws").returncode == 0
    home = box(tmp_path / "ws") / "home"
    (home / A).write_text("changed here\n", encoding="utf-8")
    again = fake_sync(env, tmp_path / "ws")
    assert summary(again)["brought over"] == 1 and (home / A).read_text(encoding="utf-8") == SAMPLE
    # a state that cannot be read, or names it holds that leave the folder
    victim = box(tmp_path / "ws").parent.parent / "victim"
    victim.write_text("kept", encoding="utf-8")
    state = box(tmp_path / "ws") / "state.json"
    state.write_text('{"files": {"../../victim": [1, 1], "/etc/hostname": [1, 1]}}', encoding="utf-8")
    env = faked(tmp_path, listing=listed(A), members=members)
    result = fake_sync(env, tmp_path / "ws")
    assert result.returncode == 0 and victim.read_text(encoding="utf-8") == "kept"
    state.write_text("{not json", encoding="utf-8")
    result = fake_sync(env, tmp_path / "ws")
    assert summary(result) == {"listed": 1, "brought over": 0, "deleted": 1}, result.stdout
    assert (home / A).is_file() and not (home / B).exists()
    assert json.loads(state.read_text(encoding="utf-8"))["files"] == {A: [len(SAMPLE), 100]}


def test_hosts_named_twice_in_the_config_are_refused(tmp_path):
    env = faked(tmp_path, listing=listed(A), argv=str(tmp_path / "argv.jsonl"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "archivist.toml").write_text('[[hosts]]\nhost = "box"\n\n[[hosts]]\nhost = "box"\nport = 2222\n')
    result = archivist(env, "sync", str(workspace))
    assert result.returncode == 1 and "INVALID_PARAMETER" in result.stderr and "box" in result.stderr
    assert not (tmp_path / "argv.jsonl").exists()


def test_ssh_dying_mid_stream_is_told_and_the_next_sync_repairs_it(tmp_path):
    members = [{"name": "./" + A, "data": SAMPLE}, {"name": "./" + B, "data": SAMPLE}]
    env = faked(tmp_path, listing=listed(A, B), members=members, cut=len(SAMPLE) + 2500, exit=255)
    result = fake_sync(env, tmp_path / "ws")
    assert result.returncode == 1 and "❌ box: " in result.stderr, result.stderr
    home = box(tmp_path / "ws") / "home"
    assert (home / A).is_file() and not (home / B).exists()
    assert not [p for p in box(tmp_path / "ws").rglob("*") if "archivist-new" in p.name or p.name.startswith(".tmp")]
    repaired = fake_sync(faked(tmp_path, listing=listed(A, B), members=members), tmp_path / "ws")
    assert repaired.returncode == 0 and summary(repaired)["brought over"] == 1, repaired.stderr
    assert (home / B).read_text(encoding="utf-8") == SAMPLE
    assert sessions_by_host(tmp_path / "ws") == {"box": 2}


def test_a_listing_cut_short_by_find_errors_deletes_nothing(tmp_path):
    members = [{"name": "./" + A, "data": SAMPLE}]
    assert fake_sync(faked(tmp_path, listing=listed(A), members=members), tmp_path / "ws").returncode == 0
    result = fake_sync(faked(tmp_path, listing=["D .claude/projects", "E .claude/projects"]), tmp_path / "ws")
    assert result.returncode == 1 and summary(result)["deleted"] == 0, result.stdout + result.stderr
    assert "nothing deleted" in result.stderr
    assert (box(tmp_path / "ws") / "home" / A).is_file()


def test_names_with_c1_controls_or_bidi_marks_are_refused_and_never_reach_the_terminal(tmp_path):
    listing = [*listed(A), "F 3 1 ./.claude/projects/\u009b31m.jsonl", "F 3 1 ./.claude/projects/\u202egpj.jsonl"]
    told = hosts.parse_listing(os.fsencode("\n".join(listing)), [".claude/projects"], hosts.Synced("box"))
    assert told.files == {A: (len(SAMPLE), 100)}
    result = fake_sync(faked(tmp_path, listing=listing, members=[{"name": "./" + A, "data": SAMPLE}]), tmp_path / "ws")
    assert result.returncode == 0 and "2 names refused" in result.stdout, result.stdout
    assert "\u009b" not in result.stdout + result.stderr and "\u202e" not in result.stdout + result.stderr


def test_a_folder_read_here_before_it_was_synced_takes_the_host(tmp_path):
    members = [{"name": "./" + A, "data": SAMPLE}]
    env = faked(tmp_path, listing=listed(A), members=members)
    assert fake_sync(env, tmp_path / "ws").returncode == 0
    db = sqlite3.connect(archive_path(tmp_path / "ws"))
    with db:
        db.execute("UPDATE log_sources SET host = NULL")
    db.close()
    assert fake_sync(env, tmp_path / "ws").returncode == 0
    assert sessions_by_host(tmp_path / "ws") == {"box": 1}


def test_the_listing_script_tells_a_folder_whose_find_failed(tmp_path):
    home = tmp_path / "home"
    (home / ".claude" / "projects").mkdir(parents=True)
    (home / ".claude" / "projects" / "a.jsonl").write_text("{}\n", encoding="utf-8")
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "find").write_text('#!/bin/sh\necho "find: cannot read" >&2\nexit 1\n', encoding="utf-8")
    (shims / "find").chmod(0o755)
    script = hosts.LIST_SCRIPT.format(folders="'.claude/projects'")
    for path, incomplete in ((os.environ["PATH"], []), (f"{shims}:{os.environ['PATH']}", [".claude/projects"])):
        said = subprocess.run(
            ["/bin/sh", "-s"], input=script.encode(), env={"HOME": str(home), "PATH": path}, capture_output=True
        )
        told = hosts.parse_listing(said.stdout, [".claude/projects"], hosts.Synced("box"))
        assert said.returncode == 0 and told.incomplete == incomplete, said
        assert told.files == (
            {} if incomplete else {".claude/projects/a.jsonl": (3, told.files[".claude/projects/a.jsonl"][1])}
        )


def test_a_huge_member_header_or_a_stream_past_its_budget_stops_the_transfer(tmp_path):
    members = [
        {"name": "./" + A, "data": SAMPLE},
        {"name": "./" + B, "data": SAMPLE, "pax": {"comment": "x" * 3_000_000}},
    ]
    env = faked(tmp_path, listing=listed(A, B), members=members)
    said, _ = in_child(env, tmp_path / "ws", "")
    assert said.startswith("DONE 1 0 the transfer stopped: a member's header of 3000") and said.count("\n") == 1, said
    many = [{"name": f"./.claude/projects/p/{n}.jsonl", "data": "{}"} for n in range(40_000)]
    env = faked(tmp_path, listing=listed(A), members=[*many, {"name": "./" + A, "data": SAMPLE}])
    said, _ = in_child(env, tmp_path / "ws2", "")
    assert said.startswith("DONE 0 ") and "the stream is longer than the files asked for" in said, said
