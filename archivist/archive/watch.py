"""Following a workspace and its agent-log sources: index again as soon as a file changes.

Filesystem events come from ``watchfiles`` (inotify on Linux, with its polling fallback
where events do not arrive, e.g. on network mounts). Changes that arrive together are
indexed in one run; changes to the archive's own files are ignored, so a run does not
wake the next one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from archivist.archive import indexer, sessions
from archivist.archive.database import Database
from archivist.workspace import archive_path, secret_key

logger = logging.getLogger(__name__)

# The longest to wait for more changes after the first one before indexing (milliseconds):
# an agent writes a message as several appends in quick succession.
DEBOUNCE_MS = 200
STEP_MS = 20  # the quiet after a change that ends a batch: an append is indexed this soon after its last write
TICK_MS = 1000  # the watcher says "nothing new" this often; its first tick means it is up


def watched_paths(workspace: Path, db_path: Path) -> list[Path]:
    """The workspace and every remembered source that exists."""
    paths = [Path(workspace)]
    if db_path.exists():
        db = Database(db_path)
        try:
            paths += sessions.paths(db)
        finally:
            db.close()
    return [path if path.is_dir() else path.parent for path in paths if path.exists()]


def look_ahead(db_path: Path) -> None:
    """The session files changed last read on ahead, storing nothing (``sessions.look_ahead``):
    the first append to one of them is then read on as quickly as the next."""
    try:
        db = Database(db_path)
        try:
            sessions.look_ahead(db, secret_key(db_path, create=False))
        finally:
            db.close()
    except Exception:  # (a help, never a reason to stop following)
        logger.debug("Reading on ahead in %s failed", db_path, exc_info=True)


def follow(
    workspace: Path,
    db_path: Path | None = None,
    stop: threading.Event | None = None,
    on_run: Callable[[indexer.Summary], None] | None = None,
    force_polling: bool | None = None,
    on_ready: Callable[[], None] | None = None,
) -> None:
    """Index ``workspace`` once the watcher is up, then after every batch of changes, until ``stop`` is set.

    The first run happens when the watcher has started (its first tick), so a file written
    while it was starting is not missed; then the session files changed last are read on
    ahead (``look_ahead``), and ``on_ready`` is called.
    """
    import watchfiles

    db_path = Path(db_path) if db_path else archive_path(workspace)
    archive_folder = db_path.parent.resolve()

    def relevant(change: watchfiles.Change, path: str) -> bool:
        return not Path(path).resolve().is_relative_to(archive_folder)

    if not db_path.exists():
        indexer.index_workspace(workspace, db_path)  # the sources to watch are in the archive
    ready = False
    while stop is None or not stop.is_set():
        paths = watched_paths(workspace, db_path)
        caught_up = False
        for changes in watchfiles.watch(
            *paths,
            # filtered here, not by watchfiles: while the archive is read or written, its
            # changes keep coming, and were they dropped the watcher would neither tick
            # nor yield, and the first run would wait for them to stop
            watch_filter=None,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=stop,
            force_polling=force_polling,
            raise_interrupt=False,
            rust_timeout=TICK_MS,
            yield_on_timeout=True,
        ):
            if caught_up and not any(relevant(*change) for change in changes):
                continue  # a tick, or only the archive's own files
            caught_up = True
            try:
                summary = indexer.index_workspace(workspace, db_path)
            except Exception:  # a run that fails (a locked archive, say) is tried again on the next change
                logger.exception("Indexing %s after a change failed", workspace)
                continue
            if on_run:
                on_run(summary)
            if not ready:
                look_ahead(db_path)
            if not ready and on_ready:
                on_ready()
            ready = True
            if watched_paths(workspace, db_path) != paths:
                break  # a source was added or removed: watch the new set
        else:
            return  # stopped


def follow_in_background(
    workspace: Path, db_path: Path | None = None, on_run: Callable[[indexer.Summary], None] | None = None
) -> threading.Event:
    """``follow`` in a daemon thread (for ``serve --watch`` and ``mcp --watch``); set the event to stop it."""
    stop = threading.Event()

    def run() -> None:
        try:
            follow(workspace, db_path, stop, on_run=on_run)
        except Exception:
            logger.exception("Following %s stopped", workspace)

    threading.Thread(target=run, name="archivist-watch", daemon=True).start()
    return stop
