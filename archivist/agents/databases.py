"""An agent's SQLite database, opened read-only and never written, even while the agent has it open.

How it is opened depends on what lies beside it:

- no ``-wal`` file with frames in it (a database in rollback mode, or one in WAL mode that no
  program has open, or whose log is checkpointed): the database itself, ``immutable`` when it
  is in WAL mode (a read-only connection would otherwise create ``-wal`` and ``-shm`` files
  and leave them behind) and ``mode=ro`` when it is not, waiting ``LOCK_TIMEOUT`` seconds at
  most for a writer's lock (then ``Unavailable``: what the archive holds of the source stays,
  and it is read again on the next run);
- a ``-wal`` file with frames (the agent has it open, or was stopped before it checkpointed),
  or any ``-wal`` beside a database in rollback mode (which SQLite would open as a log, making
  a ``-shm`` beside it, or delete where the database is empty): a copy of the two, taken into
  a private temporary folder and opened there, because even a read-only reader of a WAL
  database marks its ``-shm`` file, and an ``immutable`` one would miss what the ``-wal`` holds;
- a hot rollback journal (``-journal``: a program was stopped in the middle of a write, which
  SQLite must undo before the database can be read, and a read-only reader cannot): a copy of
  the database and its journal, in which SQLite undoes that write. The database is read as it
  was before it, as the agent will read it once it opens it again, and ``connect`` says so in
  the reading's problems.

A copy is taken again while the files change under it (``COPY_TRIES`` times, then
``Unavailable``), and removed when the connection closes. The copies of a run are in one
folder of the temporary folder, ``archivist-copies-<process id>-…`` (mode 0700, locked while
the run lives), removed when the run exits; the first database a run opens removes the
folders that runs killed before their end left there (``remove_left_copies``).

A ``-wal`` that is a link, or not a regular file, is never read or copied: beside a database in
WAL mode it is left out (the database is opened ``immutable``); beside one in rollback mode,
as a ``-journal`` of that kind anywhere, the database is not opened (SQLite would open a pipe
and wait forever), and the error says why. A database that is no regular file (a pipe, a
socket, a folder) is never opened: ``irregular`` says so, as a problem to tell. Each query is
read to its end at once (no lock is held between two of them) and may run ``QUERY_SECONDS``
at most. An error SQLite cannot word in UTF-8 (a damaged schema's name) is a
``sqlite3.DatabaseError`` like any other.
"""

from __future__ import annotations

import atexit
import errno
import os
import shutil
import sqlite3
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from archivist.agents import MAX_LINE_BYTES, Unavailable, Unread

try:
    import fcntl
except ImportError:  # (Windows: the folders of killed runs are left there)
    fcntl = None  # type: ignore[assignment]

SQLITE_HEADER = b"SQLite format 3\x00"
WAL_VERSION = 2  # header bytes 18 and 19 of a database in WAL mode
WAL_HEADER_BYTES = 32  # a -wal file no longer than its header holds no frame
LOCK_TIMEOUT = 2.0  # seconds to wait for a writer's lock before the database is told as locked
QUERY_SECONDS = 300.0  # the longest one query may run (a view over a recursive query never ends)
COPY_TRIES = 3  # copies of a database and its -wal taken while they change, before it is told as busy
BUSY_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
READONLY_ROLLBACK = 776  # SQLITE_READONLY_ROLLBACK: a hot journal that a read-only reader cannot undo
MAX_VALUE_BYTES = MAX_LINE_BYTES  # the largest value a reader takes whole (a message's JSON, say)
MAX_ID_BYTES = 4096  # an id longer than this is none an agent wrote
COPIES = "archivist-copies-"  # the folders of each run's private copies: archivist-copies-<process id>-…
EARLIER_COPIES = "archivist-db-"  # a private copy's folder, as versions before the run's folder named it
EARLIER_AGE = 24 * 3600.0  # seconds after which such a folder is one that a killed run left
NOT_REGULAR = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` is a regular file that starts as a SQLite database does (False where it
    cannot be read; a pipe is never opened)."""
    if not _regular(path):
        return False
    try:
        return _header(path, len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def tables_of(path: Path) -> set[str] | str:
    """The tables of the database at ``path``, or why it is not one that can be read (a sentence
    to end with what was expected); Unavailable while another program holds it locked."""
    if not _regular(path):
        return f"{path} is not a regular file"
    try:
        header = _header(path, len(SQLITE_HEADER))
    except OSError as error:
        return f"{path} cannot be read ({error.strerror or error})"
    if header != SQLITE_HEADER:
        return f"{path} is not a SQLite database"
    try:
        connection = connect(path)
        try:
            return tables(connection)
        finally:
            connection.close()
    except sqlite3.Error as error:
        if locked(error):
            raise unavailable(path, error) from None
        return f"{path} cannot be opened read-only as a SQLite database ({error})"
    except OSError as error:
        return f"{path} cannot be read ({error.strerror or error})"


def irregular(path: Path, shown: str | None = None) -> Unread | None:
    """A database that is there but is no regular file (a pipe, a socket, a folder), told as not
    read, as ``shown`` names it: it is never opened (a pipe would be waited on forever). None
    where it is a regular file, or not there."""
    what = _not_regular(path)
    if what is None:
        return None
    return Unread(
        f"{shown or path.name} is {what}, not a database file: not read, and what the archive holds of it is kept. "
        "Put the agent's database back in its place for it to be read."
    )


def openable(path: Path, problems: list[Any]) -> bool:
    """Whether the database at ``path`` is a regular file that is SQLite, to be opened; where it is
    not, why (``irregular``, or not SQLite) is added to ``problems``, and it is not read."""
    found = irregular(path)
    if found is not None:
        problems.append(found)
        return False
    if not is_sqlite(path):
        problems.append(Unread(f"{path.name} is not a SQLite database: not read"))
        return False
    return True


ROWIDS_AT_ONCE = 500  # the rows asked for by one query (``by_rowid``)


def by_rowid(connection: sqlite3.Connection, table: str, columns: str, rowids: list[int]) -> list[tuple[Any, ...]]:
    """The ``columns`` of ``table``'s rows of these rowids, in their order (a few hundred a query)."""
    found: dict[Any, tuple[Any, ...]] = {}
    for start in range(0, len(rowids), ROWIDS_AT_ONCE):
        chunk = rowids[start : start + ROWIDS_AT_ONCE]
        query = f'SELECT rowid, {columns} FROM "{table}" WHERE rowid IN ({", ".join("?" * len(chunk))})'
        found.update((row[0], row[1:]) for row in connection.execute(query, chunk).fetchall())
    return [found[rowid] for rowid in rowids if rowid in found]


class _Connection(sqlite3.Connection):
    """A connection whose queries have a time budget and whose errors are all sqlite3 errors;
    closing it removes the private copy it was opened on, if any."""

    copy: str | None = None
    deadline: float = 0.0

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self.deadline = time.monotonic() + QUERY_SECONDS
        try:
            return super().execute(sql, parameters)
        except UnicodeDecodeError as error:  # SQLite's message names bytes that are not UTF-8
            raise sqlite3.DatabaseError(f"damaged database ({error.reason})") from None

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self.copy is not None:
                shutil.rmtree(self.copy, ignore_errors=True)
                self.copy = None


def connect(database: Path, problems: list[str] | None = None, *, shown: str | None = None) -> sqlite3.Connection:
    """A read-only connection that writes nothing beside ``database`` (see the module). Where a
    write the agent did not finish had to be undone in a private copy, ``problems`` is told so
    once, naming the database as ``shown`` does."""
    _Run.sweep()
    if not _regular(database):
        raise sqlite3.DatabaseError(f"{database.name} is not a regular file")
    header = _header(database, 100)
    in_wal_mode = len(header) >= 20 and WAL_VERSION in (header[18], header[19])
    wal = _beside(database, "-wal")
    journal = _beside(database, "-journal")
    if in_wal_mode:
        if _size(wal) > WAL_HEADER_BYTES:
            return _opened(database, _copy(database, [wal]))
        return _opened(database, None, "mode=ro&immutable=1")
    for side in (wal, journal):
        if (what := _odd(side)) is not None:
            raise sqlite3.DatabaseError(f"{side.name} beside it is {what}, not a file SQLite can read: not opened")
    if _size(wal) > 0:  # (SQLite would read it as a log, marking a -shm beside it; or delete it)
        return _opened(database, _copy(database, [wal]))
    connection = _opened(database, None, "mode=ro")
    try:
        connection.execute("PRAGMA schema_version").fetchall()  # (a hot journal is found by the first read)
    except sqlite3.Error as error:
        connection.close()
        if getattr(error, "sqlite_errorcode", None) != READONLY_ROLLBACK:
            raise
        connection = _opened(database, _copy(database, [journal]))
        try:
            connection.execute("PRAGMA schema_version").fetchall()  # (the copy's journal is undone)
        except BaseException:
            connection.close()
            raise
        told = (
            f"{shown or database.name}: a write that did not finish left its rollback journal ({journal.name}) "
            "beside it: read as it was before that write, from a private copy; nothing to do, the agent "
            "undoes that write the next time it opens it"
        )
        if problems is not None and told not in problems:
            problems.append(told)
    return connection


def _opened(database: Path, copy: str | None, mode: str = "mode=rw") -> _Connection:
    """A connection to ``database`` in place (``mode``), or to its private copy in ``copy``."""
    file = Path(copy) / database.name if copy is not None else database.absolute()
    try:
        connection = sqlite3.connect(
            f"{file.as_uri()}?{mode}",
            uri=True,
            timeout=LOCK_TIMEOUT,
            isolation_level=None,
            factory=_Connection,
            check_same_thread=True,
        )
    except BaseException:
        if copy is not None:
            shutil.rmtree(copy, ignore_errors=True)
        raise
    assert isinstance(connection, _Connection)
    connection.copy = copy
    connection.execute("PRAGMA query_only = 1")
    connection.set_progress_handler(lambda: int(time.monotonic() > connection.deadline), 10_000)
    # SQLite keeps whatever bytes a program stored as text; one value that is not UTF-8 would
    # otherwise fail the whole query it is in.
    connection.text_factory = _text
    return connection


@contextmanager
def reading(database: Path, problems: list[str], shown: str | None = None) -> Iterator[None]:
    """The reading of ``database``: a lock held by another program is Unavailable; a damaged
    database or a file that cannot be read is told in ``problems`` as Unread (what the archive
    holds of it stays), as ``shown`` (its name) names it."""
    name = shown or database.name
    try:
        yield
    except sqlite3.Error as error:
        if locked(error):
            raise unavailable(database, error) from None
        problems.append(Unread(f"{name} cannot be read ({error})"))
    except OSError as error:
        problems.append(Unread(f"{name} cannot be read ({error.strerror or error})"))


def byte_size(column: str) -> str:
    """SQL for a column's size in bytes: a blob's is known without reading it, a text's is
    measured once (SQLite before 3.43 has no ``octet_length``)."""
    return f'CASE typeof("{column}") WHEN \'blob\' THEN length("{column}") ELSE length(CAST("{column}" AS BLOB)) END'


def bounded(column: str, limit: int = MAX_VALUE_BYTES) -> str:
    """SQL for a column's value where it has at most ``limit`` bytes, else NULL: a value too large
    to hold is never handed over (a reader tells it as skipped)."""
    return f'CASE WHEN {byte_size(column)} <= {limit} THEN "{column}" END'


def rowids_by(connection: sqlite3.Connection, table: str, key: str, order: str) -> dict[Any, list[int]]:
    """The rowids of ``table`` grouped by ``key`` (a session's id, within ``MAX_ID_BYTES``), in
    ``order``, read in one pass: nothing says the table has an index on ``key``, and a query for
    each value would then read the whole table each time."""
    groups: dict[Any, list[int]] = {}
    for value, rowid in connection.execute(
        f'SELECT {bounded(key, MAX_ID_BYTES)}, rowid FROM "{table}" ORDER BY {order}'
    ):
        if value is not None:
            groups.setdefault(value, []).append(rowid)
    return groups


def tables(connection: sqlite3.Connection) -> set[str]:
    """The names of a database's tables (not its views)."""
    return {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}


def locked(error: sqlite3.Error) -> bool:
    """Whether SQLite gave up waiting for another connection's lock (SQLITE_BUSY, SQLITE_LOCKED)."""
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in BUSY_CODES
    message = str(error).lower()
    return message.startswith(("database is locked", "database table is locked", "database schema is locked"))


def unavailable(database: Path, error: sqlite3.Error | str) -> Unavailable:
    return Unavailable(
        f"{database} is locked by another program ({error}; waited {LOCK_TIMEOUT:g} s): "
        "not read this time, what is stored of it is kept, and it is read again on the next run"
    )


def remove_left_copies() -> list[Path]:
    """Remove the folders of private copies that runs killed before their end left in the temporary
    folder; the folders removed.

    A run's folder (``archivist-copies-<process id>-…``) is removed where it is a folder of this
    user's, not a link, whose run is gone: no process of its id lives, and no process holds its
    lock (a process of another system sharing the folder holds it). An earlier version's
    (``archivist-db-…``), which says no process, once it is a day old. Nothing else is touched.
    Where processes cannot be asked (Windows), nothing is removed.
    """
    if fcntl is None or not hasattr(os, "getuid"):
        return []
    folder = Path(tempfile.gettempdir())
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    removed = []
    for name in names:
        if name.startswith(COPIES):
            pid = name[len(COPIES) :].partition("-")[0]
            if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)) and _remove(folder / name):
                removed.append(folder / name)
        elif name.startswith(EARLIER_COPIES) and _remove(folder / name, EARLIER_AGE):
            removed.append(folder / name)
    return removed


class _Run:
    """This process's folder of private copies: made when the first copy is taken, locked while
    the process lives, removed when it exits."""

    pid: int | None = None
    folder: Path | None = None
    lock: int | None = None
    swept: int | None = None  # the process that removed what killed runs left
    making = threading.Lock()

    @classmethod
    def copies(cls) -> Path:
        with cls.making:
            pid = os.getpid()
            if cls.pid == pid and cls.folder is not None and cls.folder.is_dir():
                return cls.folder
            cls.remove(cls.pid)  # (a forked process makes its own; one removed under it is made again)
            folder = Path(tempfile.mkdtemp(prefix=f"{COPIES}{pid}-"))
            cls.pid, cls.folder, cls.lock = pid, folder, _locked(folder)
            atexit.register(cls.remove, pid)
            return folder

    @classmethod
    def sweep(cls) -> None:
        if cls.swept != os.getpid():
            cls.swept = os.getpid()
            remove_left_copies()

    @classmethod
    def remove(cls, pid: int | None) -> None:
        """Remove the folder of the process ``pid``, if it is this one's."""
        if cls.pid != pid or os.getpid() != pid or cls.folder is None:
            return
        shutil.rmtree(cls.folder, ignore_errors=True)
        if cls.lock is not None:
            os.close(cls.lock)
        cls.pid = cls.folder = cls.lock = None


def _locked(folder: Path) -> int | None:
    """An open descriptor of ``folder`` holding its lock (released when the process ends, however it ends)."""
    if fcntl is None:
        return None
    try:
        handle = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(handle)
        return None
    return handle


def _alive(pid: int) -> bool:
    """Whether a process of this id lives (one of another user's: yes)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError as error:
        return error.errno != errno.ESRCH
    return True


def _remove(folder: Path, age: float | None = None) -> bool:
    """Remove a folder of copies a killed run left: one of this user's, not a link, that no process
    holds locked (and, with ``age``, unchanged for that many seconds); whether it was removed."""
    assert fcntl is not None
    try:
        handle = os.open(folder, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return False
    try:
        found = os.fstat(handle)
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
            return False
        if age is not None and time.time() - found.st_mtime < age:
            return False
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # its run lives
        if not os.path.samestat(found, os.lstat(folder)):
            return False  # (replaced since it was opened)
        shutil.rmtree(folder, ignore_errors=True)
        return not os.path.lexists(folder)
    except OSError:
        return False
    finally:
        os.close(handle)


def _copy(database: Path, sides: list[Path]) -> str:
    """A private copy of ``database`` and those of ``sides`` (its -wal, its -journal) that are
    there, taken while none of them changes, in this run's folder of copies: its folder."""
    for _ in range(COPY_TRIES):
        before = [_stamp(database), *map(_stamp, sides)]
        folder = tempfile.mkdtemp(dir=_Run.copies())
        try:
            _copy_file(database, Path(folder) / database.name, follow=True)
            for side, stamp in zip(sides, before[1:], strict=True):
                if stamp is not None:
                    try:
                        _copy_file(side, Path(folder) / side.name, follow=False)
                    except FileNotFoundError:
                        pass  # (a -wal checkpointed, a journal undone meanwhile: its stamp says so)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        if [_stamp(database), *map(_stamp, sides)] == before:
            return folder
        shutil.rmtree(folder, ignore_errors=True)
    raise Unavailable(
        f"{database} changed while it was copied, {COPY_TRIES} times: not read this time, what is stored "
        "of it is kept, and it is read again on the next run"
    )


def _copy_file(source: Path, target: Path, follow: bool) -> None:
    """Copy a regular file (never a pipe: it is opened without waiting, and refused), not through a
    link unless ``follow``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    handle = os.open(source, flags if follow else flags | getattr(os, "O_NOFOLLOW", 0))
    with open(handle, "rb") as reading:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise sqlite3.DatabaseError(f"{source.name} is not a regular file")
        with open(target, "xb") as writing:
            shutil.copyfileobj(reading, writing, 1024 * 1024)


def _header(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of a file (opened without waiting: a pipe put there since it was
    looked at is no file of bytes)."""
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(handle, "rb") as reading:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return b""
        return reading.read(size)


def _beside(database: Path, suffix: str) -> Path:
    return database.with_name(database.name + suffix)


def _size(side: Path) -> int:
    """The size of a file beside a database: 0 where it is not there, a link, or not a regular file."""
    try:
        found = os.lstat(side)
    except OSError:
        return 0
    return found.st_size if stat.S_ISREG(found.st_mode) else 0


def _odd(side: Path) -> str | None:
    """What a file beside a database is, where it is there and is a link or no regular file; else None."""
    try:
        found = os.lstat(side)
    except OSError:
        return None
    if stat.S_ISLNK(found.st_mode):
        return "a symbolic link"
    return None if stat.S_ISREG(found.st_mode) else NOT_REGULAR.get(stat.S_IFMT(found.st_mode), "no regular file")


def _not_regular(path: Path) -> str | None:
    """What ``path`` is, where it is there (through links) and is no regular file; else None."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return None if stat.S_ISREG(found.st_mode) else NOT_REGULAR.get(stat.S_IFMT(found.st_mode), "no regular file")


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_size, found.st_mtime_ns


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _text(value: bytes) -> str:
    """A text value of the database, its bytes that are not UTF-8 replaced."""
    return value.decode("utf-8", errors="replace")
