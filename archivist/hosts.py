"""Agent logs of another machine, brought over SSH into a sync folder beside the archive.

``sync`` runs the system's ``ssh`` (or ``ARCHIVIST_SSH_COMMAND``, split as a shell splits it,
as git reads GIT_SSH_COMMAND) twice at most: once with ``LIST_SCRIPT``, a POSIX ``sh`` script
that lists the regular files (never a symlink: ``find -type f``) under each kind's default
folders in the remote ``$HOME`` with their size and modification time; once more, only where
files changed since the last sync, with a script that streams them with ``tar``. Nothing but a
POSIX shell, ``find``, ``stat`` and ``tar`` is needed there, and nothing is written there.

What comes back is hostile until checked: a listed name is kept only where it is a plain
relative path (no ``..``, no ``.``, no empty part, no control or format character) under one
of the folders asked for; a member of the stream is written only where it is a regular file
whose name was asked for, once, no more than a little larger than it was listed, into a
folder of the sync folder that is no symlink, through a file made new and renamed into place.
The listing, the bytes of one sync and the names refused kept are capped; ssh's stderr is
drained by a thread and the whole ssh process group is killed at its deadline, so a remote
can neither fill the memory or the disk nor make a sync hang. A file gone from the remote is
deleted from the sync folder (unless the listing says ``find`` failed), so its sessions go as
those of a deleted local file do. Each file's size and time are kept in the host's
``state.json``, and the file kept here is compared too, so that a file unchanged is never
sent again. One sync of a host runs at a time (``flock`` on its ``.lock``).

The sync folder is ``<archive's folder>/hosts/<host>/home``: each kind's folder there is a
source of that kind whose ``host`` is the host (``log_sources.host``; NULL is this machine).
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import math
import os
import re
import shlex
import signal
import subprocess
import tarfile
import tempfile
import threading
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast

from archivist.errors import ArchivistError

SSH_VARIABLE = "ARCHIVIST_SSH_COMMAND"
CONFIG_NAME = "archivist.toml"
CONNECT_TIMEOUT = 10  # seconds ssh waits for the connection (ConnectTimeout)
SERVER_ALIVE = ("ServerAliveInterval=15", "ServerAliveCountMax=4")  # a silent connection dropped after a minute
LIST_TIMEOUT = 120  # seconds the listing may take in all
FETCH_TIMEOUT = 1800  # seconds the transfer may take in all
LISTING_BYTES = 256 << 20  # the most a listing may hold; past it the host fails
LISTING_LINES = 2_000_000
GROWTH_MARGIN = 1 << 20  # bytes a file may have grown between its listing and its sending
SYNC_BYTES = 64 << 30  # the most one sync writes
HEADER_BYTES = 1 << 20  # the largest extended header (pax, GNU long name) of a member taken
STREAM_SLACK = 16 << 20  # bytes a stream may hold beyond the files asked for (headers, padding, refused members)
STDERR_KEPT = 4096  # bytes of what the remote says on stderr kept (its last ones)
REFUSED_KEPT = 20  # refused names kept to be shown (the rest only counted)
NAMES_PER_TAR = 200  # files named to one tar on the remote (its command line stays short)
HOST_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._:%@\[\]-]{0,252}")
STATE_NAME = "state.json"
LOCK_NAME = ".lock"
SYSTEMS = ("linux", "macos")  # the systems whose default folders are looked for on a host

# The listing: each folder that exists as "D <folder>", each regular file under it as
# "F <size> <mtime> ./<path>" (names holding a newline are left out: a line is a file), and
# "E <folder>" where find or stat failed there (the listing of that folder is incomplete).
LIST_SCRIPT = """\
cd "$HOME" || exit 97
if stat -c %s . >/dev/null 2>&1; then gnu=1; else gnu=; fi
for d in {folders}; do
  [ -e "./$d" ] || continue
  printf 'D %s\\n' "$d"
  if [ -n "$gnu" ]; then
    find -H "./$d" -type f ! -path '*
*' -exec stat -c 'F %s %Y %n' {{}} + || printf 'E %s\\n' "$d"
  else
    find -H "./$d" -type f ! -path '*
*' -exec stat -f 'F %z %m %N' {{}} + || printf 'E %s\\n' "$d"
  fi
done
exit 0
"""
# The transfer: tar's status 1 (a file changed as it was read: a log growing) is no failure.
FETCH_SCRIPT = """\
cd "$HOME" || exit 97
failed=0
{tars}
exit $failed
"""
TAR_LINE = "COPYFILE_DISABLE=1 tar -cf - {names}; s=$?; [ $s -gt 1 ] && failed=$s"


class HostFailed(Exception):
    """A host that could not be synced (unreachable, refused, timed out, a listing not understood): its one line."""


@dataclass(frozen=True)
class Host:
    """A machine to sync: its name as ``ssh`` takes it, and the user and port, where given."""

    name: str
    user: str | None = None
    port: int | None = None


@dataclass
class Synced:
    """What one sync of a host did."""

    host: str
    folders: list[str] = field(default_factory=list)  # the kinds' folders found there, relative to its home
    listed: int = 0  # regular files listed
    fetched: int = 0  # files brought over
    fetched_bytes: int = 0
    deleted: int = 0  # files gone from the remote, deleted here
    refused: int = 0  # names listed or sent that were not taken
    refused_names: list[str] = field(default_factory=list)  # the first of them, each with why
    problem: str | None = None  # why the sync was only partly done, where it was
    seconds: float = 0.0

    def refuse(self, what: str) -> None:
        self.refused += 1
        if len(self.refused_names) < REFUSED_KEPT:
            self.refused_names.append(what[:200])


def invalid(problem: str, why: str, hint: str) -> ArchivistError:
    return ArchivistError("INVALID_PARAMETER", problem, why, hint)


def check_host(host: Host) -> Host:
    """``host`` if it is one ``ssh`` can be given safely and a folder can be named after; INVALID_PARAMETER if not."""
    name = host.name
    if not HOST_NAME.fullmatch(name):
        shown = name.encode("unicode_escape").decode("ascii")[:80]
        raise invalid(
            f"Invalid host {shown!r}",
            "A host is a name or address as ssh takes it: letters, digits and . _ - : % @ [ ], not starting "
            "with '-' or '.', with no space or control character.",
            "Give the host as in ~/.ssh/config, e.g. --host laptop, and the user with --user.",
        )
    if host.user is not None and not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}", host.user):
        raise invalid(
            f"Invalid user {host.user[:40]!r} for {name}",
            "A user name is letters, digits and . _ -, not starting with '-' or '.'.",
            "Give the user's login name, e.g. --user me.",
        )
    if host.port is not None and not 0 < host.port < 65536:
        raise invalid(
            f"Invalid port {host.port} for {name}", "A port is a whole number from 1 to 65535.", "e.g. --port 22"
        )
    return host


def ssh_command(host: Host, environ: dict[str, str] | None = None) -> list[str]:
    """The command that runs ``sh -s`` on ``host`` (its script on stdin): every argument after
    the client's own is fixed here, so that the user's ssh config cannot turn it into another
    (no tty, no remote command of its own, no master connection left behind)."""
    given = (os.environ if environ is None else environ).get(SSH_VARIABLE, "")
    client = shlex.split(given.strip() or "ssh")
    command = [*client, "-T", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT}"]
    for option in (*SERVER_ALIVE, "ControlPersist=no", "RemoteCommand=none"):
        command += ["-o", option]
    if host.user:
        command += ["-l", host.user]
    if host.port:
        command += ["-p", str(host.port)]
    return [*command, "--", host.name, "sh -s"]


def kinds_by_folder() -> dict[str, list[str]]:
    """Each kind's default folders on Linux and macOS, relative to the home folder, with the kinds
    whose folder each is (those outside the home, or moved only by a variable, are not looked for)."""
    from archivist.agents import registry

    home = Path("/nonexistent-home")
    kinds: dict[str, list[str]] = {}
    for system in SYSTEMS:
        for kind, path in registry.default_locations({}, home, system):
            try:
                relative = path.relative_to(home).as_posix()
            except ValueError:
                continue
            if _plain(relative) and kind not in kinds.setdefault(relative, []):
                kinds[relative].append(kind)
    return kinds


def remote_folders() -> list[str]:
    """The folders looked for on a host, relative to its home."""
    return list(kinds_by_folder())


def _plain(name: str) -> bool:
    """Whether ``name`` is a plain relative path: no '..', '.' or empty part, no control or format
    character (C0, C1, bidirectional marks)."""
    if not name or name.startswith("/") or any(unicodedata.category(c) in ("Cc", "Cf") for c in name):
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def quoted(value: str) -> str:
    """``value`` as one word of a POSIX shell (single-quoted)."""
    return "'" + value.replace("'", "'\\''") + "'"


def sync_folder(archive: Path, host: str) -> Path:
    """Where a host's files are kept: beside the archive, in ``hosts/<host>``."""
    return Path(archive).parent / "hosts" / host


@dataclass
class Listing:
    """What a host's listing says: the folders found, its files (size, mtime), the folders whose listing failed."""

    found: list[str] = field(default_factory=list)
    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    incomplete: list[str] = field(default_factory=list)


def parse_listing(text: bytes, folders: list[str], done: Synced) -> Listing:
    """What a listing says of the folders asked for; each line refused is counted in ``done``."""
    listing = Listing()
    asked = set(folders)
    for raw in text.split(b"\n"):
        if not raw:
            continue
        line = os.fsdecode(raw)
        if line.startswith(("D ", "E ")):
            if line[2:] in asked:
                seen = listing.found if line[0] == "D" else listing.incomplete
                if line[2:] not in seen:
                    seen.append(line[2:])
            continue
        match = re.fullmatch(r"F (\d{1,18}) (-?\d{1,18}) \./(.*)", line, re.DOTALL)
        name = match.group(3) if match else ""
        if match is None or not _plain(name) or not any(name.startswith(f + "/") for f in listing.found):
            done.refuse(f"{line!r}: not a plain file name under a folder asked for")
            continue
        listing.files[name] = (int(match.group(1)), int(match.group(2)))
    return listing


def read_state(folder: Path) -> dict[str, tuple[int, int]]:
    """The files kept of a host, each with the size and time it had when it was brought over: from
    its ``state.json``, or, where that cannot be read, from the files of its sync folder. A name
    that is no plain relative path is left out."""
    try:
        kept = json.loads((folder / STATE_NAME).read_text(encoding="utf-8"))
        state = {str(name): (int(size), int(mtime)) for name, (size, mtime) in kept["files"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        state = {}
        for path, stat in _files_kept(folder / "home"):
            state[path] = (stat.st_size, int(stat.st_mtime))
    return {name: stat for name, stat in state.items() if _plain(name)}


def _files_kept(home: Path) -> Iterator[tuple[str, os.stat_result]]:
    for root, _, names in os.walk(home):
        for name in names:
            path = os.path.join(root, name)
            if not name.endswith(".archivist-new") and os.path.isfile(path) and not os.path.islink(path):
                yield os.path.relpath(path, home).replace(os.sep, "/"), os.lstat(path)


def write_state(folder: Path, files: dict[str, tuple[int, int]], synced_at: str) -> None:
    """Keep ``files`` in the host's ``state.json``: written whole to a new file, flushed to the
    disk, then renamed into place (a crash leaves the old one or the new one)."""
    text = json.dumps({"synced_at": synced_at, "files": files}, ensure_ascii=True)
    fd, made = tempfile.mkstemp(prefix=f".{STATE_NAME}.", suffix=".archivist-new", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(made, folder / STATE_NAME)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(made)
    _fsync_folder(folder)


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def one_line(text: str) -> str:
    """``text`` as one line a terminal shows as it is: its whitespace runs as one space, every other
    control or format character (an escape sequence a remote's error sent, a bidirectional mark,
    a byte not in UTF-8) as U+FFFD."""
    return "".join("\ufffd" if unicodedata.category(c) in ("Cc", "Cf", "Cs") else c for c in " ".join(text.split()))


class Remote:
    """One run of the ssh command: its script on stdin, its stdout read by the caller, its stderr
    drained by a thread of its own (its last bytes kept), and the whole process group killed at
    its deadline, whatever the remote does."""

    def __init__(self, command: list[str], script: str, timeout: float) -> None:
        self.timeout, self.timed_out, self.said = timeout, False, bytearray()
        try:
            self.process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as error:
            raise HostFailed(f"ssh could not be started: {error.strerror or error}") from None
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdout = cast(io.BufferedReader, self.process.stdout)
        self.timer = threading.Timer(timeout, self._expire)
        self.timer.daemon = True
        self.timer.start()
        self.drainer = threading.Thread(target=self._drain, daemon=True)
        self.drainer.start()
        try:
            self.process.stdin.write(script.encode("utf-8", "surrogateescape"))
            self.process.stdin.close()
        except OSError:
            pass  # (the remote stopped reading: its exit status says why)

    def _expire(self) -> None:
        self.timed_out = True
        self.kill()

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def _drain(self) -> None:
        stderr = cast(io.BufferedReader, self.process.stderr)
        with contextlib.suppress(OSError, ValueError):
            while chunk := stderr.read1(65536):
                self.said += chunk
                del self.said[:-STDERR_KEPT]

    def finish(self) -> int:
        """Wait for the command's end (at its deadline at the latest); its exit status."""
        with contextlib.suppress(OSError, ValueError):
            while self.stdout.read1(65536):
                pass
        status = self.process.wait()
        self.drainer.join(5)
        self.timer.cancel()
        return status

    def close(self) -> None:
        if self.process.poll() is None:
            self.kill()
        self.process.wait()
        self.timer.cancel()
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()

    def told(self) -> str:
        """What the remote said on stderr, as one line (its end)."""
        return one_line(bytes(self.said).decode("utf-8", "replace"))[-300:]

    def failure(self, status: int) -> str:
        if self.timed_out:
            return f"timed out after {self.timeout:.0f} s"
        said = self.told()
        if status == 255:
            return f"unreachable (ssh exit 255): {said or 'no reason given'}"
        if status == 97:
            return "its home folder ($HOME) cannot be entered"
        return f"failed (exit {status}): {said or 'no reason given'}"


def _list(command: list[str], folders: list[str]) -> bytes:
    """The host's listing, read up to its caps; HostFailed when it fails or is too long."""
    remote = Remote(command, LIST_SCRIPT.format(folders=" ".join(quoted(f) for f in folders)), LIST_TIMEOUT)
    try:
        text, lines = bytearray(), 0
        while chunk := remote.stdout.read1(65536):
            text += chunk
            lines += chunk.count(b"\n")
            if len(text) > LISTING_BYTES or lines > LISTING_LINES:
                raise HostFailed(f"its listing is longer than {LISTING_LINES} lines or {LISTING_BYTES} bytes")
        status = remote.finish()
        if status != 0 or remote.timed_out:
            raise HostFailed(remote.failure(status))
        return bytes(text)
    finally:
        remote.close()


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """The host's sync folder held for one sync alone (another at once fails)."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise HostFailed("another sync of this host is running") from None
        yield
    finally:
        os.close(fd)


def sync(host: Host, archive: Path, now: str) -> Synced:
    """Bring the changed agent-log files of ``host`` into its sync folder; HostFailed with its one
    line where nothing could be done, ``Synced.problem`` where only a part was."""
    started = time.monotonic()
    check_host(host)
    done = Synced(host.name)
    folder = sync_folder(archive, host.name)
    try:
        with _locked(folder):
            _sync(host, folder, now, done)
    except OSError as error:
        raise HostFailed(f"its sync folder cannot be written: {error.strerror or error}") from None
    done.seconds = time.monotonic() - started
    return done


def _sync(host: Host, folder: Path, now: str, done: Synced) -> None:
    folders = remote_folders()
    command = ssh_command(host)
    listing = parse_listing(_list(command, folders), folders, done)
    files = listing.files
    done.folders, done.listed = listing.found, len(files)
    home = folder / "home"
    home.mkdir(exist_ok=True)
    kept = read_state(folder)
    wanted = {name: stat for name, stat in files.items() if kept.get(name) != stat or _local(home, name) != stat}
    gone = sorted(set(kept) - set(files))
    if listing.incomplete:
        done.problem = f"its listing of {', '.join(listing.incomplete)} failed part way: nothing deleted"
    else:
        for name in gone:
            _delete(home, name)
            kept.pop(name, None)
            done.deleted += 1
        if gone:
            write_state(folder, kept, now)
    if wanted:
        names = sorted(wanted)
        tars = "\n".join(
            TAR_LINE.format(names=" ".join(quoted("./" + name) for name in names[at : at + NAMES_PER_TAR]))
            for at in range(0, len(names), NAMES_PER_TAR)
        )
        try:
            problem = _fetch(command, FETCH_SCRIPT.format(tars=tars), wanted, home, done, kept)
        finally:
            write_state(folder, kept, now)
        done.problem = "; ".join(p for p in (done.problem, problem) if p) or None
    else:
        write_state(folder, kept, now)


def _local(home: Path, name: str) -> tuple[int, int] | None:
    """The size and time of the file kept at ``home/name``; None if none is there (or a link)."""
    try:
        stat = os.lstat(home / name)
    except (OSError, ValueError):
        return None
    return (
        (stat.st_size, int(stat.st_mtime)) if os.path.isfile(home / name) and not os.path.islink(home / name) else None
    )


def _fetch(
    command: list[str],
    script: str,
    wanted: dict[str, tuple[int, int]],
    home: Path,
    done: Synced,
    kept: dict[str, tuple[int, int]],
) -> str | None:
    """Stream the files asked for and write each regular one asked for, at most as large as it was
    listed (and a little more: a log grows); each written goes into ``kept`` with its size and time.
    Why the transfer stopped short, or None."""
    remote = Remote(command, script, FETCH_TIMEOUT)
    budget = sum(size for size, _ in wanted.values()) + len(wanted) * (GROWTH_MARGIN + 65536) + STREAM_SLACK
    try:
        return _take(remote, _Budget(remote.stdout, budget), wanted, home, done, kept)
    finally:
        remote.close()


class _Budget:
    """The stream of a transfer, read no further than ``left`` bytes (the files asked for, each a
    little grown, and the tar's own blocks): past it, the stream is refused."""

    def __init__(self, stream: io.BufferedReader, left: int) -> None:
        self.stream, self.left = stream, left

    def read(self, size: int = -1) -> bytes:
        chunk = self.stream.read(size if size >= 0 else 1 << 20)
        self.left -= len(chunk)
        if self.left < 0:
            raise tarfile.ReadError("the stream is longer than the files asked for")
        return chunk


class _Header(tarfile.TarInfo):
    """A member's header read as tarfile reads it, except that an extended header (pax, GNU
    long name) over HEADER_BYTES and a sparse member are refused: tarfile holds those whole in
    memory, as long as the remote makes them."""

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        extended = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)
        if self.type in (*extended, tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK) and self.size > HEADER_BYTES:
            raise tarfile.ReadError(f"a member's header of {self.size} bytes")
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise tarfile.ReadError("a sparse member")
        return super()._proc_member(tarfile_)  # type: ignore[misc]

    def _proc_gnusparse_00(self, *_: object) -> None:
        raise tarfile.ReadError("a sparse member")

    _proc_gnusparse_01 = _proc_gnusparse_10 = _proc_gnusparse_00


def _take(
    remote: Remote,
    piped: _Budget,
    wanted: dict[str, tuple[int, int]],
    home: Path,
    done: Synced,
    kept: dict[str, tuple[int, int]],
) -> str | None:
    written: set[str] = set()
    sent: set[str] = set()  # the names a member came for (taken or refused)
    problem = None
    try:
        with tarfile.open(fileobj=cast(IO[bytes], piped), mode="r|", ignore_zeros=True, tarinfo=_Header) as stream:
            while (member := stream.next()) is not None:
                stream.members.clear()  # type: ignore[attr-defined]  # (a long stream holds no member)
                name = member.name[2:] if member.name.startswith("./") else member.name
                mtime = member.mtime
                sent.add(name)
                if not member.isreg() or name not in wanted or name in written:
                    done.refuse(f"{member.name!r}: not a regular file asked for")
                    continue
                if member.size > wanted[name][0] + GROWTH_MARGIN:
                    done.refuse(f"{member.name!r}: {member.size} bytes, listed as {wanted[name][0]}")
                    continue
                if not isinstance(mtime, int | float) or not math.isfinite(mtime) or not 0 <= mtime < 1 << 40:
                    done.refuse(f"{member.name!r}: its time is not a time")
                    continue
                if done.fetched_bytes + member.size > SYNC_BYTES:
                    problem = f"stopped after {done.fetched_bytes} bytes, the most one sync brings over"
                    break
                source = stream.extractfile(member)
                assert source is not None
                _write(home, name, source, member.size, int(mtime))
                written.add(name)
                kept[name] = (member.size, int(mtime))
                done.fetched += 1
                done.fetched_bytes += member.size
    except (tarfile.TarError, OSError, ValueError, HostFailed) as error:
        problem = f"the transfer stopped: {one_line(str(error))[:200]}"
    if problem is not None:
        remote.kill()
    status = remote.finish()
    if remote.timed_out or (status != 0 and problem is None):
        problem = remote.failure(status)
    elif problem is not None and remote.told():
        problem += f" ({remote.told()})"
    missing = len(set(wanted) - sent)
    if problem is None and missing:
        problem = f"{missing} files asked for were not sent"
    return problem


def _write(home: Path, name: str, source: IO[bytes], size: int, mtime: int) -> None:
    """Write one file of the stream at ``home/name``: through folders of the sync folder that are
    no symlinks, as a file made new (never through a link) and renamed into place, at most
    ``size`` bytes; the new file is gone again if anything fails."""
    folder = home
    for part in name.split("/")[:-1]:
        folder = folder / part
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        if os.path.islink(folder) or not os.path.isdir(folder):
            raise HostFailed(f"{folder} is not a folder of the sync folder")
    target = folder / name.split("/")[-1]
    fd, made = tempfile.mkstemp(prefix=f".{target.name[:100]}.", suffix=".archivist-new", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            left = size
            while left > 0 and (chunk := source.read(min(left, 1 << 20))):
                out.write(chunk)
                left -= len(chunk)
        os.utime(made, (mtime, mtime))
        os.replace(made, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(made)


def _delete(home: Path, name: str) -> None:
    target = home / name
    if os.path.islink(target) or os.path.isfile(target):
        target.unlink()


def configured_hosts(workspace: Path) -> list[Host]:
    """The hosts named in the workspace's ``archivist.toml`` (``[[hosts]]``: host, user, port); none if it has none."""
    import tomllib

    path = Path(workspace) / CONFIG_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as error:
        raise invalid(f"Cannot read {path}", f"{error.strerror or error}.", "Check its permissions.") from None
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise invalid(f"Invalid {CONFIG_NAME}", f"{error}.", 'Write hosts as: [[hosts]] host = "laptop"') from None
    hosts = table.get("hosts", [])
    if not isinstance(hosts, list) or not all(isinstance(entry, dict) for entry in hosts):
        raise invalid(f"Invalid hosts in {CONFIG_NAME}", "hosts is a list of tables.", 'e.g. [[hosts]] host = "laptop"')
    found: list[Host] = []
    for entry in hosts:
        name, user, port = entry.get("host"), entry.get("user"), entry.get("port")
        if (
            not isinstance(name, str)
            or (user is not None and not isinstance(user, str))
            or (port is not None and (not isinstance(port, int) or isinstance(port, bool)))
        ):
            raise invalid(
                f"Invalid host in {CONFIG_NAME}: {entry!r}"[:200],
                "Each [[hosts]] has host (text), and may have user (text) and port (a number).",
                'e.g. [[hosts]] host = "laptop" user = "me" port = 22',
            )
        if any(host.name == name for host in found):
            raise invalid(
                f"Host {name} is named twice in {CONFIG_NAME}",
                "A host's name is the key of its sync folder and of its sessions: two entries of one name would mix them.",
                "Keep one [[hosts]] per name; to reach one machine two ways, give each an alias in ~/.ssh/config.",
            )
        found.append(check_host(Host(name, user, port)))
    return found
