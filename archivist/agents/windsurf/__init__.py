"""Windsurf's Cascade conversations, from the transcripts its hooks write.

Cascade's own history (``~/.codeium/windsurf/cascade/*.pb``) is encrypted and not read. What
can be read is the transcript that Windsurf writes when a ``post_cascade_response_with_transcript``
hook is configured (docs.windsurf.com ``windsurf/cascade/hooks``): after each response, the
whole conversation from its beginning, as JSONL, to ``~/.windsurf/transcripts/<trajectory_id>.jsonl``
(at most 100 files: Windsurf removes the oldest). A ``.windsurf/transcripts`` folder in a project
holds the same files where a hook copies them there. Each line is one step of the conversation,
with its ``type``, its ``status``, and an object named for its type:

- ``user_input``: ``user_response``, what the user asked (``rules_applied`` is left out);
- ``planner_response``: ``response``, what Cascade answered (``thinking``, where there is one);
- any other type (``code_action`` with ``path`` and ``new_content``; ``run_command`` with
  ``command_line`` and ``cwd``; ``view_file``, ``list_directory``, ``grep_search``, an MCP tool…):
  one tool call named for the type, on the answer it follows: the files its object names
  (``path``, ``file_path``, ``absolute_path``, ``directory_path``, a ``file://`` URI), its command
  (``command_line``, ``command``), its input (its object less its output and its command), a
  ``code_action``'s ``new_content`` as the file written whole (an edit), and its output where it
  has one (``output``, ``stdout``, ``stderr``, ``result``, ``mcp_result``) as a tool message.

The documentation warns that a step's fields may change: a reader takes what it knows and lets
the rest be. A file is one session, keyed by its name (the trajectory's id); its title is its
first request. The documented steps carry no time and no model: a step's ``timestamp`` or
``created_at`` and its ``model_name`` or ``model`` are read where a version writes them, and
otherwise the session's time is the file's modification time (the end of its last response,
when the hook wrote it). No usage is recorded. The project is the folder holding a project's
``.windsurf``, or the working directory of the first command. Left out on purpose:
``rules_applied`` and the steps' ``status``. A line that is not JSON, or not a step, is skipped and told in the
session's problems.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from archivist import agents

KIND = "windsurf"
EXPECTED = (
    "a Windsurf transcripts folder (~/.windsurf/transcripts, or a project's .windsurf/transcripts), "
    "the folder holding it, or one transcript (<trajectory_id>.jsonl)"
)
FOLDER = ".windsurf"
TRANSCRIPTS = "transcripts"
FILE_KEYS = ("path", "file_path", "absolute_path", "absolute_path_uri", "directory_path", "uri", "target_file")
COMMAND_KEYS = ("command_line", "command", "commandLine")
OUTPUT_KEYS = ("output", "stdout", "stderr", "result", "mcp_result")
NO_STEP = "a line that is no step (an object with a type)"


def check(path: str | Path) -> str | None:
    """Why ``path`` is not a source of Windsurf's transcripts (a sentence), or None."""
    path = Path(path).expanduser()
    if (reason := agents.no_source(path, EXPECTED)) is not None:
        return reason
    if not agents.is_dir(path):
        return None if _looks_like(path) else f"{path} is not a Windsurf transcript: expected {EXPECTED}."
    root = agents.Root(path)
    folder = transcripts_folder(root)
    if folder is None:
        return f"{path} holds no transcripts folder ({FOLDER}/{TRANSCRIPTS}): expected {EXPECTED}."
    files = root.files(folder, ".jsonl")
    if not files:
        return f"{folder} holds no .jsonl transcript: expected {EXPECTED}."
    if not _looks_like(files[0]):
        return f"{files[0]} is not a Windsurf transcript: expected {EXPECTED}."
    return None


def transcripts_folder(root: agents.Root) -> Path | None:
    """The transcripts folder of a source that is a folder: itself, or the ``transcripts`` of a
    ``.windsurf`` folder it is or holds; None where there is none (or only a link leading out)."""
    path = root.path
    if path.name == TRANSCRIPTS:
        return path
    steps = [TRANSCRIPTS] if path.name == FOLDER else [FOLDER, TRANSCRIPTS]
    folder = path
    for name in steps:
        folder = folder / name
        if not agents.is_dir(folder) or not root.allows(folder):
            return None
    return folder


def _looks_like(file: Path) -> bool:
    """Whether a file is a transcript: a ``.jsonl`` whose first line is a step."""
    if file.suffix != ".jsonl":
        return False
    return agents.first_value_is(file, _is_step)  # (True for an empty transcript, being written)


def _is_step(step: Any) -> bool:
    return isinstance(step, dict) and isinstance(step.get("type"), str) and ("status" in step or step["type"] in step)


def read(path: str | Path, problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every transcript's session, in the order of the files' names."""
    problems = problems if problems is not None else []
    root = agents.Root(Path(path).expanduser(), problems)
    if root.named is not None:
        files, project = [root.path], _project(root.path.parent)
    else:
        folder = transcripts_folder(root)
        if folder is None:
            return
        files, project = root.files(folder, ".jsonl"), _project(folder)
    for file in files:
        session = _session(file, project, problems)
        if session is not None:
            yield session


def _project(folder: Path) -> str | None:
    """The project a transcripts folder belongs to: the folder holding its ``.windsurf``, unless
    that is the home folder (where every project's transcripts are)."""
    if folder.name != TRANSCRIPTS or folder.parent.name != FOLDER:
        return None
    holder = folder.parent.parent
    try:
        home = Path.home()
    except RuntimeError:
        home = None
    return None if home is not None and holder == home else str(holder)


def _session(file: Path, project: str | None, unread: list[str]) -> agents.Session | None:
    """The session of one transcript; None where it holds no message, or where its reading stopped
    (told in ``unread`` as Unread)."""
    messages: list[agents.Message] = []
    skipped: dict[str, int] = {}
    models: list[str] = []
    commands_cwd: str | None = None
    try:
        with file.open("rb") as handle:
            for step in agents.json_lines_that(handle, skipped, _is_step, NO_STEP):
                cwd = _step(step, messages, models)
                commands_cwd = commands_cwd or cwd
    except OSError as error:
        unread.append(agents.Unread(f"{file.name}: reading stopped ({error.strerror or error})"))
        return None
    if not any(message.text or message.tool_calls for message in messages):
        return None
    times = sorted(message.timestamp for message in messages if message.timestamp)
    if not times:
        try:
            modified = agents.iso_utc(file.stat().st_mtime)
        except OSError:
            modified = None
        times = [modified] if modified else []
    requests = [message.text for message in messages if message.role == "user" and message.text]
    return agents.Session(
        key=file.stem,
        agent=KIND,
        title=agents.short_title(requests[0]) if requests else file.stem,
        messages=messages,
        project=project or commands_cwd,
        models=models,
        started=times[0] if times else None,
        last=times[-1] if times else None,
        files=[file],
        problems=agents.skipped_problems(skipped),
        titled=bool(requests),
    )


def _step(step: dict[str, Any], messages: list[agents.Message], models: list[str]) -> str | None:
    """One step added to the messages; the working directory a command step names, if any."""
    kind: str = step["type"]
    found = step.get(kind)
    body: dict[str, Any] = found if isinstance(found, dict) else {}
    when = agents.iso_utc(step.get("timestamp")) or agents.iso_utc(step.get("created_at"))
    model = (
        agents.text_or_none(step.get("model_name"))
        or agents.text_or_none(step.get("model"))
        or agents.text_or_none(body.get("model"))
    )
    if model and model not in models:
        models.append(model)
    if kind == "user_input":
        text = agents.text_or_none(body.get("user_response"))
        if text:
            messages.append(agents.Message("user", text, when))
        return None
    if kind == "planner_response":
        text = agents.text_or_none(body.get("response")) or ""
        thinking = agents.text_or_none(body.get("thinking")) or ""
        if text or thinking:
            messages.append(agents.Message("assistant", text, when, model, thinking=thinking))
        return None
    call = agents.ToolCall(kind)
    for key in FILE_KEYS:
        found = agents.uri_path(body.get(key))
        if found and found not in call.files:
            call.files.append(found)
    call.commands = [command for key in COMMAND_KEYS if (command := agents.text_or_none(body.get(key)))][:1]
    said = [key for key in COMMAND_KEYS if isinstance(body.get(key), str) and body[key] in call.commands]
    written = agents.text_edit(call.files[0], None, body.get("new_content")) if call.files else None
    call.edits = [written] if written is not None else []
    call.input = agents.call_input(body, without=(*OUTPUT_KEYS, *said, *(["new_content"] if written else [])))
    if not messages or messages[-1].role != "assistant":
        messages.append(agents.Message("assistant", "", when, model))
    messages[-1].tool_calls.append(call)
    output = "\n".join(text for key in OUTPUT_KEYS if isinstance(text := body.get(key), str) and text.strip())
    if output:
        messages.append(agents.Message("tool", "", when, tool_output=output))
    return agents.text_or_none(body.get("cwd")) if call.commands else None
