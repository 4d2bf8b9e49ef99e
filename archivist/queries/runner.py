"""Running the canned queries by name, outside Datasette.

The SQL lives only in the package's canned queries (catalog); this module runs it on
an archive with the same SQL functions the Datasette plugin registers.
"""

from __future__ import annotations

import contextlib
import json
import queue
import sqlite3 as stdlib_sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist import errors
from archivist.archive import schema
from archivist.archive.database import connect_read_only, disk_full, not_written, primary_code, sqlite3, unwritable
from archivist.errors import ArchivistError
from archivist.queries import sqlfunctions, validation
from archivist.queries.catalog import default_settings, sql_for
from archivist.workspace import archive_path


def warm(db_path: Path | str | None, query: str = "") -> None:
    """Read the archive's vectors (if they changed; an archive in memory has none), then load the
    embedding model and embed ``query``: outside SQL, where loading either could pass a query's
    time limit. An archive without vectors loads no model: nothing is searched by meaning there
    (``archivist_embed`` gives no vector)."""
    from archivist.semantic import onnx_model, vectors

    if db_path and not vectors.warm(str(Path(db_path).resolve())):
        return
    onnx_model.load()
    onnx_model.query_vector(query)


def preload(db_path: Path) -> bool:
    """For an archive that has been embedded, load the embedding model and its vectors now, so
    that a first search by meaning waits for neither; False (and nothing loaded) otherwise."""
    if not schema.is_embedded(db_path):
        return False
    warm(db_path)
    return True


def plugin_settings() -> dict[str, Any]:
    return default_settings()


def connect(db_path: Path, settings: dict[str, Any] | None = None) -> Any:
    """A read-only connection with the archive's SQL functions registered (on a full disk too: ``connect_read_only``)."""
    conn = connect_read_only(db_path, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    sqlfunctions.register(conn, plugin_settings() if settings is None else settings)
    return conn


def unreadable(path: Path | str, error: BaseException, again: str) -> ArchivistError:
    """What a surface says of an archive SQLite could not open or read (``error``).

    Only a file that is not an SQLite database is called no archive. A disk that cannot be
    written is ARCHIVE_NOT_WRITTEN (a full one with the space it has free and the archive
    takes: the archive is intact, and nothing says to move it); a damaged archive is told as
    damaged; anything else (its permissions, a lock), that it could not be opened now.
    ``again`` is what to do once that is seen to (a sentence that follows "then").
    """
    if primary_code(error) == sqlite3.SQLITE_NOTADB:
        return ArchivistError(
            "DIRECTORY_NOT_FOUND",
            f"Not an Archivist archive: {path}",
            f"The file is not an SQLite database ({error}).",
            "Run: archivist index WORKSPACE",
        )
    if unwritable(error) or disk_full(path, error):
        return not_written(
            path,
            error,
            "SQLite writes a small file beside an archive to read it (its -shm, 32 KB), and could not; "
            "the archive itself is intact.",
            again,
            done="read",
        )
    if primary_code(error) == sqlite3.SQLITE_CORRUPT:
        return ArchivistError(
            "DIRECTORY_NOT_FOUND",
            f"The archive at {path} is damaged: {error}",
            "SQLite found pages of it that are not as it wrote them (a disk or a copy that failed).",
            "Keep a copy of it (sqlite3's .recover may save what it holds), then move it aside and index again.",
        )
    return ArchivistError(
        "DIRECTORY_NOT_FOUND",
        f"The archive at {path} could not be opened: {error}",
        "SQLite could not read it now: its permissions, the folder's, or another process's lock on it.",
        f"Check that it can be read, then {again}",
    )


def response_of(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A canned query that answers with one JSON ``response`` column (``search``), decoded."""
    response: dict[str, Any] = json.loads(rows[0]["response"])
    return response


# Every call's time limit, the web's (Datasette's sql_time_limit_ms) and MCP's alike.
TIME_LIMIT_MS = 1000
# How often (in SQLite virtual machine steps) a running query checks its time limit.
PROGRESS_STEPS = 1000


@dataclass
class Budget:
    """How much work one call may do, and the flag its caller raises when it stops waiting.

    The limit counts the CPU time of the call's own thread (time.thread_time): a call
    waiting its turn behind other clients' calls on a busy machine spends none of it.
    A thread's CPU time never runs ahead of the wall clock, so it is read (a system call,
    which takes tens of microseconds on a busy virtual machine) only once the limit has
    passed by the wall clock (time.perf_counter, which costs nothing).
    """

    limit: float | None = None  # seconds of the thread's CPU time
    cancel: threading.Event | None = None
    started: float = field(default_factory=time.perf_counter)
    cpu_started: float = field(default_factory=time.thread_time)

    def spent(self) -> bool:
        if self.cancel is not None and self.cancel.is_set():
            return True
        if self.limit is None or time.perf_counter() - self.started <= self.limit:
            return False
        return time.thread_time() - self.cpu_started > self.limit


class Archive:
    """One archive file, queried by canned-query name.

    Calls borrow one of a few read-only connections (SQLite readers in WAL mode never
    wait for each other), so concurrent callers never queue behind one connection;
    past ``POOL_SIZE`` running queries, a call waits for a free one, which costs it none
    of its time limit. With ``time_limit_ms`` every call stops after that much work,
    as Datasette's SQL time limit does.
    """

    POOL_SIZE = 4  # queries at once: more gains nothing on few cores, and each costs memory

    def __init__(self, db_path: Path, settings: dict[str, Any] | None = None, time_limit_ms: int | None = None) -> None:
        self.db_path = Path(db_path)
        if not self.db_path.exists():
            raise ArchivistError(
                "DIRECTORY_NOT_FOUND",
                f"No archive at {self.db_path}",
                "The workspace has not been indexed yet.",
                "Run: archivist index WORKSPACE",
            )
        self.settings = settings
        self.time_limit_ms = time_limit_ms
        self._local = threading.local()
        self._idle: queue.LifoQueue[Any] = queue.LifoQueue()
        self._connections: list[Any] = []
        self._lock = threading.Lock()
        try:
            first = self._open()  # open (and check) the first one now
        except (sqlite3.Error, stdlib_sqlite3.Error) as error:
            raise self._unreadable(error) from None
        try:
            self._check_schema(first)
        except ArchivistError:
            first.close()
            raise
        self._idle.put(first)
        self._pooled = 1
        self._own: Any = None

    @classmethod
    def for_workspace(cls, workspace: Path, time_limit_ms: int | None = None) -> Archive:
        return cls(archive_path(workspace), time_limit_ms=time_limit_ms)

    def _check_schema(self, conn: Any) -> None:
        problem = schema.archive_problem(conn)
        if problem == "older":
            raise ArchivistError(
                "DIRECTORY_NOT_FOUND",
                f"The archive at {self.db_path} was written by an older version of Archivist",
                "Its schema lacks what this version's queries read.",
                "Run: archivist index WORKSPACE (it upgrades the archive; nothing is lost)",
            )
        if problem is not None:
            raise ArchivistError(
                "DIRECTORY_NOT_FOUND",
                f"Not an Archivist archive: {self.db_path}",
                f"The database {problem}.",
                "Run: archivist index WORKSPACE",
            )

    def _unreadable(self, error: BaseException) -> ArchivistError:
        return unreadable(self.db_path, error, "call again.")

    def _open(self) -> Any:
        conn = connect(self.db_path, self.settings)
        conn.set_progress_handler(self._over_budget, PROGRESS_STEPS)
        with self._lock:
            self._connections.append(conn)
        return conn

    @contextlib.contextmanager
    def _borrowed(self) -> Iterator[Any]:
        try:
            conn = self._idle.get_nowait()
        except queue.Empty:
            with self._lock:
                room = self._pooled < self.POOL_SIZE
                self._pooled += room
            conn = self._open() if room else self._idle.get()
        try:
            yield conn
        finally:
            self._idle.put(conn)

    @property
    def conn(self) -> Any:
        """A connection of the caller's own, for reads of its own (one thread at a time)."""
        if self._own is None:
            self._own = self._open()
        return self._own

    def _over_budget(self) -> int:
        budget = getattr(self._local, "budget", None)
        return 1 if budget is not None and budget.spent() else 0

    def execute(self, name: str, params: dict[str, str]) -> list[dict[str, Any]]:
        """Run a canned query as written, with no validation (callers validate)."""
        budget = getattr(self._local, "budget", None)
        try:
            with self._borrowed() as conn:
                return [dict(row) for row in conn.execute(sql_for(name), params).fetchall()]
        except (sqlite3.OperationalError, stdlib_sqlite3.OperationalError) as error:
            if unwritable(error) or primary_code(error) == sqlite3.SQLITE_CANTOPEN:
                raise self._unreadable(error) from None
            if budget is None or "interrupted" not in str(error):
                raise
            if budget.cancel is not None and budget.cancel.is_set():
                raise errors.cancelled() from None
            raise errors.took_too_long(self.time_limit_ms or 0) from None

    def run(
        self, name: str, params: dict[str, Any] | None = None, cancel: threading.Event | None = None
    ) -> list[dict[str, Any]]:
        """Validate the parameters, then run the canned query: the rows, or an ArchivistError."""
        sql_for(name)
        prepared = validation.prepare(name, params or {}, self.execute)
        if validation.QUERIES[name].needs_model(prepared):
            warm(self.db_path, prepared["query"])  # loading the model or the vectors is not the query's time
        self._local.budget = Budget(self.time_limit_ms / 1000 if self.time_limit_ms else None, cancel)
        try:
            return self.execute(name, prepared)
        finally:
            self._local.budget = None

    def search(self, params: dict[str, Any] | None = None, cancel: threading.Event | None = None) -> dict[str, Any]:
        """The unified search (docs/contract.md: canned queries): the response the REST endpoint and MCP tool return."""
        return response_of(self.run("search", params, cancel))

    def building(self) -> dict[str, Any] | None:
        """What every answer tells of an index run still storing agent logs (``archive.building.told``)."""
        from archivist.archive import building

        with self._borrowed() as conn:
            return building.told(conn)

    def close(self) -> None:
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._idle = queue.LifoQueue()
        self._pooled = 0
        self._own = None

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
