"""What a kind's reader offers: the module a registry entry names (``hookspecs.Kind.reader``).

Every reader is a ``Reader``; one may also offer what ``ReadsOn``, ``NewestFirst`` and
``LogFiles`` add. ``registry.reader`` refuses a module that is not a ``Reader`` or whose
``KIND`` is not its entry's name; mypy checks the readers built in against these types
(tests/test_agent_readers.py). Sources are read where they are: nothing a reader does writes,
moves or copies a file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, runtime_checkable

from archivist.agents import Session


@runtime_checkable
class Reader(Protocol):
    """A kind's reader: its name, whether a path is a source of it, and the sessions a source holds.

    ``check(path)``: why ``path`` is not a source of this kind (a sentence saying what was
    expected), or None when it is one. ``read(path, problems)``: every session (or exported
    conversation) under ``path``, in a stable order; a bad line, record or file never raises:
    it is skipped and told in the session's ``problems``, or, when no session holds it (a file
    that cannot be read at all), appended to ``problems``.
    """

    KIND: str  # its name on the command line (--source KIND=PATH): its registry entry's name

    def check(self, path: Path) -> str | None: ...

    def read(self, path: Path, problems: list[str] | None = None) -> Iterator[Session]: ...


@runtime_checkable
class ReadsOn(Reader, Protocol):
    """A reader of logs that are appended to (JSONL), which reads on where a file grew.

    ``read_from``: the messages of one session file from byte ``offset`` on (where its
    ``Session.tail`` said to resume), as a session keyed ``key`` whose project and models so far
    were those; None when those lines cannot simply follow what was read before (the whole
    source is read again then).
    """

    def read_from(
        self, path: Path, offset: int, key: str, project: str | None, models: list[str] | None = None
    ) -> Session | None: ...


@runtime_checkable
class NewestFirst(Reader, Protocol):
    """A reader of one session per file, which reads the newest first.

    ``newest``: its ``count`` newest sessions (by the time of their last lines, else their file's, newest first),
    each read alone and keyed as ``read`` keys it, so that a first index of a large source can
    store them before the rest. What ``read`` takes from other files (another file's summary as
    a title, a message a resumed session shares) may be missing; ``read`` stores them again,
    whole, after.
    """

    def newest(self, path: Path, count: int, problems: list[str] | None = None) -> Iterator[Session]: ...


@runtime_checkable
class LogFiles(Reader, Protocol):
    """A reader whose source is a folder around its logs (a repository, a project).

    ``log_files``: the files and folders of the source that hold its logs, whose changes make
    it read again (without it: the whole source).
    """

    def log_files(self, path: Path) -> list[Path]: ...
