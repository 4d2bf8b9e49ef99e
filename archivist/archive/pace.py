"""How the reading of an agent-log source goes on: what is stored is committed as it goes (so
that a search finds it while the rest is read, and a run that stops keeps it), a large source
read for the first time stores its newest sessions first and is read in a worker process while
this one writes, and the bytes read are told as they are read (``Progress``), so that a
progress bar can say how long is left.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from archivist.archive import building

if TYPE_CHECKING:
    from archivist.agents import Session
    from archivist.archive.database import Database
    from archivist.archive.prepared import Prepared

NEWEST_FIRST = 100  # the sessions a large source read for the first time stores before the rest
LARGE_BYTES = 100_000_000  # a source whose log files hold this many bytes is large,
LARGE_FILES = 1_000  # and so is one of this many files
COMMIT_SECONDS = 1.0  # while a source is read, what it stored is committed this often
IN_WORKER = True  # a large source is read in a worker process where there is more than one core

# what is being read (a source: "claude-code: /home/ana/.claude/projects"), its bytes read so
# far and its bytes in all
Progress = Callable[[str, int, int], None]


class Pace:
    """One source's reading: its files' bytes, those read so far, and when it last committed."""

    def __init__(
        self, db: Database, label: str, files: Iterable[tuple[str, os.stat_result]], progress: Progress | None
    ) -> None:
        self.db = db
        self.label = label
        self.progress = progress
        self.sizes = {path: stat.st_size for path, stat in files}
        self.total = sum(self.sizes.values())
        self.done = 0
        self.read: set[str] = set()
        self.committed = time.monotonic()
        self.since = building.now()
        if progress is not None:
            progress(label, 0, self.total)

    def large(self) -> bool:
        """Whether the source is large enough that its newest sessions are stored first."""
        return self.total >= LARGE_BYTES or len(self.sizes) >= LARGE_FILES

    def in_worker(self) -> bool:
        """Whether the source is read in a worker process while this one writes (``session_worker``)."""
        return IN_WORKER and self.large() and (os.cpu_count() or 1) > 1

    def stored(self, session: Session | Prepared) -> None:
        """A session was stored: its files count as read, and what was stored is committed when due."""
        for file in session.files:
            path = str(file)
            if path in self.sizes and path not in self.read:
                self.read.add(path)
                self.done += self.sizes[path]
        if self.progress is not None:
            self.progress(self.label, self.done, self.total)
        if time.monotonic() - self.committed >= COMMIT_SECONDS:
            self.commit()

    def finished(self) -> None:
        """The source was read whole: every byte of it counts as read."""
        self.done = self.total
        if self.progress is not None:
            self.progress(self.label, self.done, self.total)

    def commit(self) -> None:
        """What was stored so far, committed: a search sees it, and a run that stops keeps it;
        and that the archive is still being built, and how far this source is read (``building``)."""
        if self.db.conn.in_transaction:
            building.record(self.db, self.label, self.done, self.total, self.since)
            self.db.conn.execute("COMMIT")
            self.db.conn.execute("BEGIN")
        self.committed = time.monotonic()
