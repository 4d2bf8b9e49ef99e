"""Searches take turns: a few run at once, and one that waits past its time limit for a turn is refused.

The web and MCP run every canned query through a ``Line``. Without one, a hundred searches at
once queued behind a few threads and the last waited many seconds, with nothing to say why;
with one, a search either starts within its time limit or is told ``SEARCH_BUSY`` (HTTP 503)
at once, nothing changed, and the searches that did start are not slowed by a longer queue.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio

from archivist import errors

# How many may wait for a turn, for each one running: past that, a search is refused without waiting.
WAITING_PER_ROOM = 64


class Line:
    """At most ``room`` searches at once; one kept waiting longer than ``patience_s`` is refused."""

    def __init__(self, room: int, patience_s: float | None) -> None:
        self.room = max(1, room)
        self.patience_s = patience_s
        self._turns = anyio.Semaphore(self.room)
        self._waiting = 0

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Run the body in a turn of its own; ``SEARCH_BUSY`` when none came within the patience."""
        if self._waiting >= self.room * WAITING_PER_ROOM:
            raise errors.busy(self.room, self.patience_s)
        self._waiting += 1
        try:
            with anyio.move_on_after(self.patience_s) as waited:
                await self._turns.acquire()
        finally:
            self._waiting -= 1
        if waited.cancelled_caught:
            raise errors.busy(self.room, self.patience_s)
        try:
            yield
        finally:
            self._turns.release()
