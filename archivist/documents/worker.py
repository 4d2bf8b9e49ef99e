"""What a worker process of the indexer needs of its own."""

from __future__ import annotations

import os
import threading
import time


def exit_with_parent(parent: int) -> None:
    """In a worker process (``indexer``): exit as soon as the process ``parent`` is gone (killed,
    say), where it would wait for work from it for ever."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="archivist-exit-with-parent", daemon=True).start()
