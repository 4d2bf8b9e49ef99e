"""What the MCP tools do, without the MCP SDK: the workspaces a server may read, its embedding
jobs, a search call's parameters and the text of an answer.

The tools (``tools``) wrap these for the SDK; the stdio entry (``stdio``) uses them to
answer a first search while the SDK is still loading, so nothing here imports it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist import errors
from archivist.errors import ArchivistError
from archivist.queries.rules import API_OUTPUT
from archivist.queries.runner import TIME_LIMIT_MS, Archive
from archivist.workspace import archive_path, resolve_folder

logger = logging.getLogger(__name__)

# told how an embedding job goes: (documents done, documents in all, a line saying so)
Listener = Callable[[float, float | None, str | None], None]


class Workspaces:
    """The workspaces a server may read: the one it serves and those its operator allowed, nothing else.

    A caller's ``workspace_path`` selects among them. Any other folder, existing or
    not, is refused with the same answer, and no call ever creates an archive:
    an allowed workspace must have been indexed by its operator.
    """

    def __init__(
        self,
        default_archive: Path | Callable[[], Path],
        default_workspace: Path | None = None,
        allowed: Iterable[Path] | Callable[[], Iterable[Path]] = (),
        time_limit_ms: int | None = TIME_LIMIT_MS,
    ) -> None:
        # callables when they are only known later (Datasette adds its database after its plugins load)
        self._default = default_archive
        self._default_workspace = default_workspace
        self._resolved: tuple[Path, Path] | None = None
        self._allowed = allowed
        self.time_limit_ms = time_limit_ms
        self._open: dict[Path, Archive] = {}
        self._lock = threading.Lock()
        self.jobs = EmbedJobs()

    @property
    def default_archive(self) -> Path:
        return Path(self._default() if callable(self._default) else self._default)

    @property
    def default_workspace(self) -> Path:
        return self._own()[0]

    def _own(self) -> tuple[Path, Path]:
        """The server's own workspace and archive, resolved: once, but for an archive looked up per call."""
        if self._resolved is not None:
            return self._resolved
        own = (
            Path(self._default_workspace or self.default_archive.parent.parent).resolve(),
            self.default_archive.resolve(),
        )
        if not callable(self._default):
            self._resolved = own
        return own

    def allowed(self) -> list[Path]:
        extra = self._allowed() if callable(self._allowed) else self._allowed
        return list(dict.fromkeys([self.default_workspace, *(Path(folder).resolve() for folder in extra)]))

    def workspace(self, workspace_path: str | None) -> Path:
        """The allowed workspace a caller named (the server's own when none), or DIRECTORY_NOT_FOUND."""
        if not workspace_path:
            return self.default_workspace
        allowed = self.allowed()
        folder = resolve_folder(workspace_path)  # whether a folder is there is not said: only if it is allowed
        if folder is None or folder not in allowed:
            shown = workspace_path if len(workspace_path) <= 120 else workspace_path[:117] + "..."
            raise ArchivistError(
                "DIRECTORY_NOT_FOUND",
                f"Not an allowed workspace: {shown!r}",
                "This server reads only the workspaces its operator allowed: " + ", ".join(map(str, allowed)) + ".",
                "Leave workspace_path out for the server's workspace, or ask the operator to start the server "
                "with --allow-workspace FOLDER.",
            )
        return folder

    def _indexed(self, workspace_path: str | None) -> tuple[Path, Path]:
        """(workspace, archive) of an allowed workspace whose archive exists."""
        folder = self.workspace(workspace_path)
        own_workspace, own_archive = self._own()
        path = own_archive if folder == own_workspace else archive_path(folder)
        if not path.exists():
            raise ArchivistError(
                "DIRECTORY_NOT_FOUND",
                f"No archive for workspace {folder}",
                "The workspace has not been indexed yet, and a tool call never creates an archive.",
                f"Run: archivist index {folder}",
            )
        return folder, path

    def embedding_target(self, workspace_path: str | None) -> tuple[Path, Path]:
        """(workspace, archive) for the embedding API."""
        return self._indexed(workspace_path)

    def archive(self, workspace_path: str | None) -> Archive:
        _folder, path = self._indexed(workspace_path)  # each call: an archive removed since is not read
        with self._lock:
            if path not in self._open:
                self._open[path] = Archive(path, time_limit_ms=self.time_limit_ms)
            return self._open[path]


def internal_error() -> ArchivistError:
    return ArchivistError(
        "INTERNAL_ERROR", "The tool failed", "An unexpected error; the server's log has the details.", "Report this."
    )


def search_params(arguments: dict[str, Any]) -> dict[str, Any]:
    """The search tool's arguments (every one, defaults filled, the workspace left out) as the
    search's parameters: an empty output is the default one, and encoding_context, accepted from
    the memory service's callers, has no effect."""
    return {**arguments, "output": arguments["output"] or API_OUTPUT, "encoding_context": None}


def answer_text(payload: dict[str, Any]) -> str:
    """A tool's answer as the text a client shows its model: compact JSON, as an agent pays per token."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def tool_result(payload: dict[str, Any]) -> dict[str, Any]:
    """A ``tools/call`` result (MCP's ``CallToolResult``, as JSON) for a tool's structured answer."""
    return {"content": [{"type": "text", "text": answer_text(payload)}], "structuredContent": payload, "isError": False}


def tool_error(error: ArchivistError) -> dict[str, Any]:
    """A ``tools/call`` result for a tool's docs/errors.md error."""
    return {"content": [{"type": "text", "text": error.message}], "structuredContent": error.to_dict(), "isError": True}


class JobStopped(Exception):
    """Raised between two batches when an embedding job is asked to stop."""


@dataclass
class EmbedJob:
    """One embedding run of a workspace, as get_embedding_status reports it."""

    workspace: str
    path: str | None
    state: str = "running"  # running, done, stopped, failed
    documents_total: int = 0
    documents_done: int = 0
    chunks_embedded: int = 0
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    result: dict[str, Any] | None = None
    error: ArchivistError | None = None
    stop: threading.Event = field(default_factory=threading.Event, repr=False)
    finished: threading.Event = field(default_factory=threading.Event, repr=False)
    listeners: list[Listener] = field(default_factory=list, repr=False)

    def status(self) -> dict[str, Any]:
        def iso(seconds: float | None) -> str | None:
            return None if seconds is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))

        return {
            "state": self.state,
            "workspace": self.workspace,
            "path": self.path,
            "documents_total": self.documents_total,
            "documents_done": self.documents_done,
            "chunks_embedded": self.chunks_embedded,
            "started_at": iso(self.started_at),
            "finished_at": iso(self.finished_at),
            "error": self.error.to_dict() if self.error else None,
        }


class EmbedJobs:
    """Embedding runs in their own threads, one at a time per archive (one writer).

    A call waits for its job up to a bound and sends progress while it waits; a job
    that outlasts the wait goes on in the background and get_embedding_status shows it.
    """

    def __init__(self) -> None:
        self._jobs: dict[Path, EmbedJob] = {}
        self._writers: dict[Path, threading.Lock] = {}
        self._lock = threading.Lock()

    def latest(self, db_path: Path) -> EmbedJob | None:
        with self._lock:
            return self._jobs.get(db_path)

    def start(self, workspace: Path, path: str | None, db_path: Path) -> EmbedJob:
        """The running job of this archive, or a new one."""
        from archivist.semantic.embeddings import resolve_scope

        resolve_scope(workspace, path)  # a bad path fails the call now, not the job later
        with self._lock:
            job = self._jobs.get(db_path)
            if job is not None and job.state == "running" and job.path in (None, path):
                return job  # it covers this call's documents already
            job = self._jobs[db_path] = EmbedJob(str(workspace), path)
            writer = self._writers.setdefault(db_path, threading.Lock())
        thread = threading.Thread(
            target=self._run, args=(job, workspace, db_path, writer), name="archivist-embed", daemon=True
        )
        thread.start()
        return job

    def _run(self, job: EmbedJob, workspace: Path, db_path: Path, writer: threading.Lock) -> None:
        with writer:  # after the archive's running job, if any
            self._embed(job, workspace, db_path)

    def _embed(self, job: EmbedJob, workspace: Path, db_path: Path) -> None:
        from archivist.semantic.embeddings import embed_workspace

        def progress(total: int) -> Callable[[int, int], None]:
            job.documents_total = total
            self._tell(job, f"{total} documents to embed")

            def tick(documents: int, chunks: int) -> None:
                job.documents_done += documents
                job.chunks_embedded = chunks
                self._tell(job, f"{job.documents_done} of {total} documents, {chunks} chunks")
                if job.stop.is_set():
                    raise JobStopped

            return tick

        try:
            result = embed_workspace(workspace, job.path, db_path, progress)
            job.result, job.state = result.to_dict(with_total_files=job.path is not None), "done"
        except JobStopped:
            job.state = "stopped"  # what was embedded stays: the next run resumes from there
        except ArchivistError as error:
            job.state, job.error = "failed", error
        except Exception:
            logger.exception("Embedding job failed")
            job.state, job.error = "failed", internal_error()
        finally:
            job.finished_at = time.time()
            job.finished.set()

    @staticmethod
    def _tell(job: EmbedJob, message: str) -> None:
        for listener in list(job.listeners):
            listener(job.documents_done, job.documents_total or None, message)

    def wait(self, job: EmbedJob, seconds: float, progress: Listener, cancel: threading.Event) -> dict[str, Any]:
        """The job's result when it ends within ``seconds``; else where it stands (it goes on)."""
        job.listeners.append(progress)
        try:
            deadline = time.monotonic() + seconds
            while not job.finished.wait(0.2):
                if cancel.is_set():  # the caller cancelled a call it was waiting on: stop the job too
                    job.stop.set()
                    raise errors.cancelled()
                if time.monotonic() > deadline:
                    return {
                        "success": True,
                        "embedded": job.documents_done,
                        "skipped": 0,
                        "running": True,
                        "job": job.status(),
                    }
        finally:
            job.listeners.remove(progress)
        if job.error is not None:
            raise job.error  # the job's own error, whole: what, why and what to try
        if job.result is None:
            raise ArchivistError(
                "INVALID_PARAMETER", "The embedding job was stopped", "Run the tool again to resume it."
            )
        return {"success": True, **job.result}
