"""What the commands tell on stderr: one-line refusals and errors, the steps told with -v,
and the log lines; and whether a person watches (progress bars are drawn only for one)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import NoReturn

import click

from archivist.errors import ArchivistError

ASGIApp = Callable[[dict, Callable, Callable], Awaitable[None]]


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


def log_to_stderr(told: bool = True) -> Callable[[], None]:
    """Every logger's warnings and errors, and with ``told`` the ``archivist`` logger's INFO, each as
    one plain line on stderr; libraries' INFO stays out. Returns what puts the loggers back as they were.

    The one logging set-up of every command (the ``cli`` group calls it; see ``SERVERS``). Without
    it, Python's own last resort shows warnings and errors alike, one plain line each: so a command
    that logs nothing never imports logging. The handler on the root logger also keeps a library's
    own ``logging.basicConfig`` from adding a second, formatted handler: the MCP SDK's, at INFO
    through rich, which datasette-mcp's endpoint runs and which told each of Datasette's internal
    requests as a multi-line record. uvicorn's and Datasette's loggers reach it too (the servers
    start uvicorn with ``log_config=None``).
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
    ours.setLevel(logging.INFO if told else logging.WARNING)

    def restore() -> None:
        root.removeHandler(handler)
        root.setLevel(levels[0])
        ours.setLevel(levels[1])

    return restore


# The commands that run a server: they set logging up even without -v, since the libraries
# they load would otherwise configure it their own way (the MCP SDK's basicConfig at INFO).
SERVERS = ("serve", "mcp")


def set_up_logging(command: str | None, verbose: bool) -> Callable[[], None] | None:
    """Logging for the command about to run, set up once, here: what ``log_to_stderr`` says, for
    the servers and with -v; None for any other command without -v (nothing to set up).

    The ``archivist`` logger's INFO is told with -v, and by ``archivist mcp`` always: its
    stderr is an MCP client's log, where a person reads when the embedding model is ready.
    """
    if not verbose and command not in SERVERS:
        return None
    return log_to_stderr(told=verbose or command == "mcp")


def with_request_lines(app: ASGIApp) -> ASGIApp:
    """A server's app that tells one line per request on stderr once it is answered, with -v:
    ``GET /search?query=proxy 200 12 ms`` (method, path and query, status, time). A token in the
    query is not shown; requests the app makes to itself (Datasette's pages call its JSON API)
    never reach this wrapper, so they are not told."""
    import logging
    import re
    import time

    logger = logging.getLogger("archivist.requests")
    token = re.compile(r"(^|&)token=[^&]*")

    async def told(scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        started, status = time.perf_counter(), None

        async def sending(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await app(scope, receive, sending)
        finally:
            path = scope.get("raw_path") or scope["path"].encode("utf-8", "backslashreplace")
            query = token.sub(r"\1token=…", scope.get("query_string", b"").decode("ascii", "backslashreplace"))
            shown = path.decode("ascii", "backslashreplace") + (f"?{query}" if query else "")
            took = (time.perf_counter() - started) * 1000
            logger.info("%s %s %s %.0f ms", scope["method"], shown, status or "-", took)

    return told


def interactive() -> bool:
    """Whether a person watches stderr (a terminal): progress bars are drawn only for one."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


VERBOSE = "archivist.verbose"  # in the command's context: -v was given


def is_verbose() -> bool:
    """Whether -v was given to the command that runs."""
    context = click.get_current_context(silent=True)
    return bool(context is not None and context.meta.get(VERBOSE))


def info(message: str) -> None:
    """A step of the command, told on stderr with -v (the archivist logger's INFO); without -v, nothing."""
    if is_verbose():
        import logging

        logging.getLogger("archivist.cli").info(message)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
