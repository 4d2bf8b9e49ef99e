"""A large agent-log source read in a worker process: while this process writes what came to
SQLite, the worker reads the next sessions, hashes them, masks their secrets and makes their
rows (``prepared.prepare``), the longer half of the work on two cores
(``bench/agentlog_index.py``).

The sessions come in the reader's order through a queue bounded in sessions and in bytes
(``IN_FLIGHT``, ``IN_FLIGHT_BYTES``), so memory stays that of a few sessions whatever the
history's size and however far the worker runs ahead. A reader's ``OSError`` is raised here as a reading in this process would raise
it (what was stored stays: ``sessions.index_sources``); a worker that cannot be started
leaves the reading to this process; one that dies is told as ``Unavailable``, so that the
source is read again on the next run, and what was committed stays.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue as queues
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archivist.agents import Unavailable, valid_session
from archivist.documents.worker import exit_with_parent

if TYPE_CHECKING:
    from archivist.agents import Session
    from archivist.archive.prepared import Prepared

IN_FLIGHT = 16  # sessions prepared ahead of the writer at most,
IN_FLIGHT_BYTES = 32 * 1024 * 1024  # and at most this many bytes of their text (one larger goes alone)
ROOM_BYTES = 1024 * 1024  # the bytes a unit of the room between worker and writer stands for
POLL_SECONDS = 1.0  # how often a wait for the worker checks that it is still there
logger = logging.getLogger(__name__)


def read_here(
    kind: str, path: Path, problems: list[str], newest: int = 0, host: str | None = None
) -> Iterator[Session | None]:
    """Each session of the source, read in this process, its text made valid Unicode and its
    ``host`` set (the source's machine: None for this one): with ``newest``, first that many of
    its newest sessions, read alone (the kind's ``newest``), then None, then every session."""
    from archivist.archive import sources

    reader = sources.module(kind)
    if newest:
        yield from (on_host(valid_session(session), host) for session in reader.newest(path, newest, []))
        yield None
    yield from (on_host(valid_session(session), host) for session in reader.read(path, problems))


def on_host(session: Session, host: str | None) -> Session:
    """``session`` as one of ``host``'s, and so the same session when it is read again (``again``)."""
    session.host = host
    again = session.again
    if again is not None:

        def read_again() -> Session | None:
            found = again()
            return None if found is None else on_host(found, host)

        session.again = read_again
    return session


def prepared(
    kind: str,
    path: Path,
    source: str,
    known: dict[str, str],
    now: str,
    key: bytes | None,
    problems: list[str],
    newest: int = 0,
    host: str | None = None,
) -> Iterator[Session | Prepared | None]:
    """What ``read_here`` yields, each session prepared in a worker process (read here, where no
    worker could be started); what the reader tells goes to ``problems`` at the end."""
    context = multiprocessing.get_context("spawn")
    try:
        out: Any = context.Queue(IN_FLIGHT)
        room = Room(context.Semaphore(max(1, IN_FLIGHT_BYTES // ROOM_BYTES)), ROOM_BYTES, IN_FLIGHT_BYTES)
        worker = context.Process(
            target=_work,
            args=(kind, str(path), source, known, now, key, newest, host, os.getpid(), out, room),
            name="archivist-sessions",
            daemon=True,
        )
        worker.start()
    except Exception:  # no process to be had here (a sandbox): read here
        logger.debug("no worker process for reading sessions", exc_info=True)
        yield from read_here(kind, path, problems, newest, host)
        return
    try:
        while True:
            try:
                what, value = out.get(timeout=POLL_SECONDS)
            except queues.Empty:
                if not worker.is_alive():
                    stopped = f"the process reading {kind} sessions stopped (exit code {worker.exitcode})"
                    raise Unavailable(stopped) from None
                continue
            if what == "session":
                yield room.taken(value)
            elif what == "done":
                problems.extend(value)
                return
            else:
                raise value
    finally:
        if worker.is_alive():
            worker.terminate()
        worker.join(timeout=10)
        out.close()


def _work(
    kind: str,
    path: str,
    source: str,
    known: dict[str, str],
    now: str,
    key: bytes | None,
    newest: int,
    host: str | None,
    parent: int,
    out: Any,
    room: Room,
) -> None:
    """In the worker: what ``read_here`` yields, each session prepared, put on ``out`` once
    there is room for its bytes (``sent``); then ("done", the reader's problems), or ("failed",
    what stopped it)."""
    exit_with_parent(parent)
    from archivist.archive.prepared import new_masker, prepare_parts

    masker = new_masker(key)
    problems: list[str] = []
    try:
        for session in read_here(kind, Path(path), problems, newest, host):
            if session is None:
                out.put(("session", None))
                continue
            for ready in prepare_parts(session, source, known.get, now, masker):
                known[ready.key] = ready.content_hash  # (a newest one read again is not masked again)
                out.put(("session", room.sent(ready)))
    except OSError as error:
        out.put(("failed", OSError(error.errno, error.strerror or str(error))))
        return
    except Exception as error:  # (a reader's fault: told as it would be in the writer)
        out.put(("failed", RuntimeError(f"{type(error).__name__}: {error}")))
        return
    out.put(("done", problems))


@dataclass(frozen=True)
class Room:
    """The room between the worker and the writer, in units of ``unit`` bytes (a semaphore shared
    by both): a session prepared takes the units of its text's bytes (``weight``), ``most``
    bytes' at most (a session larger than the room goes alone), until the writer takes it."""

    free: Any
    unit: int
    most: int

    def units(self, size: int) -> int:
        """The units ``size`` bytes take."""
        return max(1, min(size // self.unit, self.most // self.unit))

    def sent(self, ready: Prepared) -> tuple[int, Prepared]:
        """In the worker: a prepared session, once the room its bytes take is free, with its units."""
        held = self.units(weight(ready))
        for _ in range(held):
            self.free.acquire()
        return held, ready

    def taken(self, value: tuple[int, Prepared] | None) -> Prepared | None:
        """In the writer: a session the worker sent, its room given back; None as it came."""
        if value is None:
            return None
        held, ready = value
        for _ in range(held):
            self.free.release()
        return ready


def weight(ready: Prepared) -> int:
    """The bytes a prepared session's rows hold in text, about what it takes on its way (pickled)."""
    if ready.rows is None:
        return 0
    document, messages = ready.rows
    return sum(len(value) for row in [document, *messages] for value in row.values() if isinstance(value, str | bytes))
