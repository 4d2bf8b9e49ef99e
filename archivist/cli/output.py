"""What the commands tell on stderr: one-line refusals and errors, the steps told with -v,
and the log lines; and whether a person watches (progress bars are drawn only for one)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn

import click

from archivist.errors import ArchivistError


def fail(error: ArchivistError) -> NoReturn:
    """An error of the work itself: what was wrong, why and what to try, on one line of stderr; exit status 1."""
    click.echo(one_line(error), err=True)
    sys.exit(1)


def one_line(error: ArchivistError) -> str:
    """The error's problem, why and hint (the ❌ / ℹ️ / 💡 lines elsewhere) as one line, with its code."""
    problem = " ".join(error.problem.split()).rstrip(".")
    rest = " ".join(" ".join(part.split()) for part in (error.why, error.hint) if part)
    return f"❌ {problem}" + (f": {rest}" if rest else "") + f" [{error.code}]"


def refuse(problem: str, code: str = "DIRECTORY_NOT_FOUND") -> NoReturn:
    """Bad input on the command line itself: one line on stderr, exit status 1, nothing done."""
    click.echo(f"❌ {problem} [{code}]", err=True)
    sys.exit(1)


class _CurrentStderr:
    """sys.stderr as it is when a line is written (a test runner may swap it between commands)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def log_to_stderr() -> Callable[[], None]:
    """The ``archivist`` logger's INFO, and every logger's warnings and errors, each as one plain
    line on stderr; libraries' INFO stays out. Returns what puts the loggers back as they were.

    Without it (no -v), Python's own last resort shows warnings and errors alike, one plain line
    each: so the commands configure logging only when asked, and a command that logs nothing
    never imports it. The handler on the root logger also keeps a library's own
    ``logging.basicConfig`` (the MCP SDK's, at INFO) from adding a second, formatted handler.
    """
    import logging

    def wanted(record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or record.name.split(".")[0] == "archivist"

    handler = logging.StreamHandler(_CurrentStderr())
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.addFilter(wanted)
    root, ours = logging.getLogger(), logging.getLogger("archivist")
    levels = root.level, ours.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    ours.setLevel(logging.INFO)

    def restore() -> None:
        root.removeHandler(handler)
        root.setLevel(levels[0])
        ours.setLevel(levels[1])

    return restore


def interactive() -> bool:
    """Whether a person watches stderr (a terminal): progress bars are drawn only for one."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


VERBOSE = "archivist.verbose"  # in the command's context: -v was given


def info(message: str) -> None:
    """A step of the command, told on stderr with -v (the archivist logger's INFO); without -v, nothing."""
    context = click.get_current_context(silent=True)
    if context is not None and context.meta.get(VERBOSE):
        import logging

        logging.getLogger("archivist.cli").info(message)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
