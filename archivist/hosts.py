"""Agent logs of another machine, brought over SSH into a sync folder beside the archive.

``sync`` runs the system's ``ssh`` (or ``ARCHIVIST_SSH_COMMAND``, split as a shell splits it,
as git reads GIT_SSH_COMMAND) twice at most: once with ``LIST_SCRIPT``, a POSIX ``sh`` script
that lists the regular files (never a symlink: ``find -type f``) under each kind's default
folders in the remote ``$HOME`` with their size and modification time; once more, only where
files changed since the last sync, with a script that streams them with ``tar``. Nothing but a
POSIX shell, ``find``, ``stat`` and ``tar`` is needed there, and nothing is written there.

What comes back is hostile until checked: a listed name is kept only where it is a plain
relative path (no ``..``, no ``.``, no empty part, no control character) under one of the
folders asked for; a member of the stream is written only where it is a regular file whose
name was asked for, into a folder of the sync folder that is no symlink, through a file made
new and renamed into place. A file gone from the remote is deleted from the sync folder, so
its sessions go as those of a deleted local file do. Each file's size and time are kept in
the host's ``state.json``, so that a file unchanged is never sent again.

The sync folder is ``<archive's folder>/hosts/<host>/home``: each kind's folder there is a
source of that kind whose ``host`` is the host (``log_sources.host``; NULL is this machine).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from archivist.errors import ArchivistError

SSH_VARIABLE = "ARCHIVIST_SSH_COMMAND"
CONNECT_TIMEOUT = 10  # seconds ssh waits for the connection (ConnectTimeout)
LIST_TIMEOUT = 120  # seconds the listing may take in all
FETCH_TIMEOUT = 1800  # seconds the transfer may take in all
NAMES_PER_TAR = 200  # files named to one tar on the remote (its command line stays short)
HOST_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._:%@\[\]-]{0,252}")
STATE_NAME = "state.json"
SYSTEMS = ("linux", "macos")  # the systems whose default folders are looked for on a host

# The listing: each folder that exists as "D <folder>", each regular file under it as
# "F <size> <mtime> ./<path>" (names holding a newline are left out: a line is a file).
LIST_SCRIPT = """\
cd "$HOME" || exit 97
if stat -c %s . >/dev/null 2>&1; then gnu=1; else gnu=; fi
for d in {folders}; do
  [ -e "./$d" ] || continue
  printf 'D %s\\n' "$d"
  if [ -n "$gnu" ]; then
    find -H "./$d" -type f ! -path '*
*' -exec stat -c 'F %s %Y %n' {{}} +
  else
    find -H "./$d" -type f ! -path '*
*' -exec stat -f 'F %z %m %N' {{}} +
  fi
done
exit 0
"""
FETCH_SCRIPT = """\
cd "$HOME" || exit 97
{tars}
exit 0
"""


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
    refused: list[str] = field(default_factory=list)  # names listed or sent that were not taken, and why
    seconds: float = 0.0


def invalid(problem: str, why: str, hint: str) -> ArchivistError:
    return ArchivistError("INVALID_PARAMETER", problem, why, hint)


def check_host(host: Host) -> Host:
    """``host`` if it is one ``ssh`` can be given safely and a folder can be named after; INVALID_PARAMETER if not."""
    name = host.name
    if not HOST_NAME.fullmatch(name) or name in (".", ".."):
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
    the client's own is fixed here."""
    given = (os.environ if environ is None else environ).get(SSH_VARIABLE, "")
    client = shlex.split(given.strip() or "ssh")
    command = [*client, "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT}"]
    if host.user:
        command += ["-l", host.user]
    if host.port:
        command += ["-p", str(host.port)]
    return [*command, "--", host.name, "sh -s"]


def remote_folders() -> list[str]:
    """Each kind's default folders on Linux and macOS, relative to the home folder (those
    outside it, or moved only by a variable, are not looked for on a host)."""
    from archivist.agents import registry

    home = Path("/nonexistent-home")
    found: list[str] = []
    for system in SYSTEMS:
        for _, path in registry.default_locations({}, home, system):
            try:
                relative = path.relative_to(home)
            except ValueError:
                continue
            if relative.parts and _plain(relative.as_posix()):
                found.append(relative.as_posix())
    return list(dict.fromkeys(found))


def kinds_by_folder() -> dict[str, list[str]]:
    """The kinds whose default folder each remote folder is."""
    from archivist.agents import registry

    home = Path("/nonexistent-home")
    kinds: dict[str, list[str]] = {}
    for system in SYSTEMS:
        for kind, path in registry.default_locations({}, home, system):
            try:
                relative = path.relative_to(home).as_posix()
            except ValueError:
                continue
            if kind not in kinds.setdefault(relative, []):
                kinds[relative].append(kind)
    return kinds


def _plain(name: str) -> bool:
    """Whether ``name`` is a plain relative path: no '..', '.' or empty part, no control character."""
    if not name or name.startswith("/") or any(ord(c) < 32 or ord(c) == 127 for c in name):
        return False
    return all(part not in ("", ".", "..") for part in name.split("/"))


def quoted(value: str) -> str:
    """``value`` as one word of a POSIX shell (single-quoted)."""
    return "'" + value.replace("'", "'\\''") + "'"


def sync_folder(archive: Path, host: str) -> Path:
    """Where a host's files are kept: beside the archive, in ``hosts/<host>``."""
    return Path(archive).parent / "hosts" / host


def parse_listing(text: bytes, folders: list[str]) -> tuple[list[str], dict[str, tuple[int, int]], list[str]]:
    """The listing's folders found, its files (relative to the home: size, mtime) and the lines refused."""
    found: list[str] = []
    files: dict[str, tuple[int, int]] = {}
    refused: list[str] = []
    asked = set(folders)
    for raw in text.split(b"\n"):
        if not raw:
            continue
        line = os.fsdecode(raw)
        if line.startswith("D "):
            if line[2:] in asked and line[2:] not in found:
                found.append(line[2:])
            continue
        match = re.fullmatch(r"F (\d{1,18}) (-?\d{1,18}) \./(.*)", line, re.DOTALL)
        name = match.group(3) if match else ""
        if match is None or not _plain(name) or not any(name == f or name.startswith(f + "/") for f in found):
            refused.append(line[:200])
            continue
        files[name] = (int(match.group(1)), int(match.group(2)))
    return found, files, refused


def read_state(folder: Path) -> dict[str, tuple[int, int]]:
    """The files kept of a host, each with the size and time it had when it was brought over."""
    try:
        kept = json.loads((folder / STATE_NAME).read_text(encoding="utf-8"))
        return {str(name): (int(size), int(mtime)) for name, (size, mtime) in kept["files"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def write_state(folder: Path, files: dict[str, tuple[int, int]], synced_at: str) -> None:
    made = folder / f".{STATE_NAME}.new"
    made.write_text(json.dumps({"synced_at": synced_at, "files": files}, ensure_ascii=False), encoding="utf-8")
    os.replace(made, folder / STATE_NAME)


def _run(command: list[str], script: str, timeout: float) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            command, input=script.encode("utf-8", "surrogateescape"), capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise HostFailed(f"timed out after {timeout:.0f} s") from None
    except OSError as error:
        raise HostFailed(f"ssh could not be started: {error.strerror or error}") from None


def one_line(text: str) -> str:
    """``text`` as one line a terminal shows as it is: its whitespace runs as one space, every other
    control character (an escape sequence a remote's error sent) as U+FFFD."""
    return "".join("\ufffd" if ord(c) < 32 or 127 <= ord(c) < 160 else c for c in " ".join(text.split()))


def _failed(result: subprocess.CompletedProcess[bytes]) -> HostFailed:
    said = one_line(result.stderr.decode("utf-8", "replace"))[-300:]
    if result.returncode == 255:
        return HostFailed(f"unreachable (ssh exit 255): {said or 'no reason given'}")
    if result.returncode == 97:
        return HostFailed("its home folder ($HOME) cannot be entered")
    return HostFailed(f"failed (exit {result.returncode}): {said or 'no reason given'}")


def sync(host: Host, archive: Path, now: str, timeout: float = LIST_TIMEOUT) -> Synced:
    """Bring the changed agent-log files of ``host`` into its sync folder; HostFailed with its one line."""
    started = time.monotonic()
    check_host(host)
    done = Synced(host.name)
    folders = remote_folders()
    command = ssh_command(host)
    listing = _run(command, LIST_SCRIPT.format(folders=" ".join(quoted(f) for f in folders)), timeout)
    if listing.returncode != 0:
        raise _failed(listing)
    found, files, refused = parse_listing(listing.stdout, folders)
    done.folders, done.listed, done.refused = found, len(files), refused
    folder = sync_folder(archive, host.name)
    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    kept = read_state(folder)
    wanted = sorted(name for name, stat in files.items() if kept.get(name) != stat or not _there(home, name))
    for name in sorted(set(kept) - set(files)):
        _delete(home, name)
        kept.pop(name, None)
        done.deleted += 1
    if wanted:
        tars = "\n".join(
            "tar -cf - " + " ".join(quoted("./" + name) for name in wanted[at : at + NAMES_PER_TAR])
            for at in range(0, len(wanted), NAMES_PER_TAR)
        )
        fetched = _fetch(command, FETCH_SCRIPT.format(tars=tars), set(wanted), home, done, FETCH_TIMEOUT)
        kept.update(fetched)
    write_state(folder, kept, now)
    done.seconds = time.monotonic() - started
    return done


def _there(home: Path, name: str) -> bool:
    return os.path.isfile(home / name) and not os.path.islink(home / name)


def _fetch(
    command: list[str], script: str, wanted: set[str], home: Path, done: Synced, timeout: float
) -> dict[str, tuple[int, int]]:
    """Stream the files asked for and write each regular one asked for; their size and time."""
    written: dict[str, tuple[int, int]] = {}
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        process.stdin.write(script.encode("utf-8", "surrogateescape"))
        process.stdin.close()
        deadline = time.monotonic() + timeout
        try:
            with tarfile.open(fileobj=process.stdout, mode="r|", ignore_zeros=True) as stream:
                for member in stream:
                    if time.monotonic() > deadline:
                        raise HostFailed(f"timed out after {timeout:.0f} s")
                    name = member.name[2:] if member.name.startswith("./") else member.name
                    if not member.isreg() or name not in wanted or name in written:
                        done.refused.append(f"{member.name[:200]!r}: not a regular file asked for")
                        continue
                    source = stream.extractfile(member)
                    assert source is not None
                    _write(home, name, source, int(member.mtime))
                    written[name] = (member.size, int(member.mtime))
                    done.fetched += 1
                    done.fetched_bytes += member.size
        except tarfile.TarError as error:
            if not written:
                process.kill()
                said = one_line(process.stderr.read().decode("utf-8", "replace"))[-300:]
                raise HostFailed(f"the files could not be read ({error}): {said}") from None
        finally:
            if process.poll() is None:
                process.kill()
    return written


def _write(home: Path, name: str, source: object, mtime: int) -> None:
    """Write one file of the stream at ``home/name``: through folders of the sync folder that are
    no symlinks, as a file made new and renamed into place (never through a link)."""
    folder = home
    for part in name.split("/")[:-1]:
        folder = folder / part
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        if os.path.islink(folder) or not os.path.isdir(folder):
            raise HostFailed(f"{folder} is not a folder of the sync folder")
    target = folder / name.split("/")[-1]
    made = folder / f".{target.name}.archivist-new"
    fd = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        while chunk := source.read(1 << 20):  # type: ignore[attr-defined]
            out.write(chunk)
    os.utime(made, (mtime, mtime))
    os.replace(made, target)


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
    found = []
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
        found.append(check_host(Host(name, user, port)))
    return found


CONFIG_NAME = "archivist.toml"
