"""Whether the archive is still being built: an index run that reads agent logs for longer than
a commit's pace (``pace.COMMIT_SECONDS``) says so in ``archive_meta`` with each commit (which
source, how much of it is read, by which process), and takes it back when it ends.

Whoever reads the archive meanwhile (a search, a page, an MCP tool, ``archivist status``)
finds what is stored so far, and learns from ``state`` that more is coming: ``building``
while the indexing process is alive, ``stopped`` where it ended before it finished (what it
committed stays searchable; the next run reads the rest).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3 as stdlib_sqlite3
import threading
from typing import TYPE_CHECKING, Any

from archivist.archive.database import sqlite3

if TYPE_CHECKING:
    from archivist.archive.database import Database

# its row of archive_meta, written, taken back, and read (through the view of migration 19)
RECORD_SQL = "INSERT OR REPLACE INTO archive_meta (key, value) VALUES ('building', ?)"
FINISHED_SQL = "DELETE FROM archive_meta WHERE key = 'building'"
STATE_SQL = "SELECT value FROM archive_building"


# The runs of this process still going, by thread: a run that ended here without taking its row
# back (it could not write it) is not told as building to a reader in the same process (a server).
_running: dict[int, set[str]] = {}


def record(db: Database, source: str, done: int, total: int, since: str) -> None:
    """Say, in the transaction about to be committed, that ``source`` is being read: ``done`` of
    its ``total`` bytes, since ``since``, by this process (until ``ended``)."""
    run = f"{threading.get_ident()}:{since}"
    _running.setdefault(threading.get_ident(), set()).add(run)
    value = {"pid": os.getpid(), "run": run, "source": source, "done": done, "total": total, "since": since}
    db.execute(RECORD_SQL, [json.dumps(value, ensure_ascii=False)])


def finished(db: Database) -> None:
    """The run has read every source: the archive is built (in the run's last transaction)."""
    db.execute(FINISHED_SQL)


def ended() -> None:
    """This thread's run ended, written whole or not: a row it left says ``stopped``."""
    _running.pop(threading.get_ident(), None)


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def state(value: str | None) -> dict[str, Any] | None:
    """What a reader is told of the ``building`` row's ``value``: None where the archive is built;
    else ``state`` (``building``, or ``stopped`` where the process that wrote it is gone), the
    ``source`` being read, ``percent`` of its bytes read, and ``since`` when."""
    if not value:
        return None
    try:
        found = json.loads(value)
        pid, run, source, since = int(found["pid"]), str(found["run"]), str(found["source"]), str(found["since"])
        done, total = int(found["done"]), int(found["total"])
    except (ValueError, TypeError, KeyError):
        return None  # (not written by this module: nothing to tell)
    percent = min(100, done * 100 // total) if total > 0 else 0
    return {
        "state": "building" if _alive(pid, run) else "stopped",
        "source": source,
        "percent": percent,
        "since": since,
    }


def told(conn: Any) -> dict[str, Any] | None:
    """``state`` of the archive open on ``conn`` (any connection that executes SQL): what every answer
    tells of an index run that is still storing agent logs, or None where the archive is built."""
    try:
        row = conn.execute(STATE_SQL).fetchone()
    except (sqlite3.OperationalError, stdlib_sqlite3.OperationalError):
        return None  # (an archive without the view, served as it is: nothing to tell)
    return state(row[0] if row else None)


def state_json(value: str | None) -> str | None:
    """``state`` as JSON text, for SQL (``archivist_building``)."""
    told = state(value)
    return None if told is None else json.dumps(told, ensure_ascii=False)


def _alive(pid: int, run: str) -> bool:
    """Whether ``run`` of process ``pid`` goes on: this process's runs are known; another's is
    taken to go on while the process is there (signal 0 sends nothing; 0 and less name none)."""
    if pid <= 0:
        return False
    if pid == os.getpid():
        return any(run in runs for runs in list(_running.values()))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OverflowError:
        return False
    except OSError:
        return True  # (another user's process: there)
    return True


def sentence(told: dict[str, Any]) -> str:
    """What a page or the command line says of a ``state`` that is not None."""
    if told["state"] == "building":
        return (
            f"The archive is still being built: {told['source']} is {told['percent']}% read "
            f"(since {told['since']}). What is found is what is stored so far, the newest sessions first."
        )
    return (
        f"The last index run stopped with {told['source']} {told['percent']}% read: what it stored is "
        "found; run archivist index again to read the rest."
    )
