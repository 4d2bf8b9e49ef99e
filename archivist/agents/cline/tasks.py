"""Cline's and Roo Code's tasks, read in place: one session per task folder.

Both VS Code extensions keep each task in ``<globalStorage>/<extension id>/tasks/<task id>/``
(Cline: ``saoudrizwan.claude-dev``, and ``~/.cline/data/tasks/`` for its standalone build;
Roo Code, a fork of Cline: ``rooveterinaryinc.roo-cline``). The shapes below are those the
extensions' own storage code writes (cline/cline ``core/storage/disk.ts`` and
``shared/messages``; RooCodeInc/Roo-Code ``core/task-persistence``):

- ``api_conversation_history.json``: the conversation as sent to the model, a list of
  Anthropic messages (``role`` user or assistant; ``content`` a string or blocks: ``text``,
  ``image``, ``tool_use``, ``tool_result``, ``thinking``, and Roo's ``reasoning``). Newer
  versions add ``ts`` (Unix milliseconds) to each, Cline a ``modelInfo.modelId``.
- ``ui_messages.json``: what the panel showed, each with its ``ts``, ``type`` (``say`` or
  ``ask``), its kind (``say``/``ask``) and ``text`` (JSON for a tool, a question, a request):
  their first and last times date a session whose messages carry none (and a Cline task's id
  is its start, in ms).
- ``task_metadata.json`` (Cline): ``model_usage[].model_id``, the models the task used.
- The workspace: Roo's ``history_item.json`` (``workspace``), Cline's
  ``state/taskHistory.json`` beside ``tasks/`` (``cwdOnTaskInitialization``), else the
  "Current Working Directory (…)" line of the environment details sent with the first request.

A message's text: a user's without the environment details the extension appends
(``<environment_details>``) and without its ``<task>``, ``<feedback>`` and ``<user_message>``
wrappers; an assistant's with its thinking apart. A ``tool_use`` block, or a tool written as
XML in an assistant's text (Cline's older format: ``<read_file><path>…</path></read_file>``),
is a tool call with the files (``path``) and commands (``command``) of its arguments; the
XML leaves the text, except what a tool says to the person (``attempt_completion``'s
result, a follow-up question, a plan). An image is an attachment, ``[image]`` in the text:
its data is never kept.

A user record of the conversation file holds more than what the person wrote, each stored as
what it is:

- a ``tool_result`` block, or a text that begins ``[tool for '…'] Result:`` (with the text
  blocks after it), is a tool message whose output is kept apart; so is what the extension
  says in place of a tool it did not run (``Skipping tool [...]``, ``Tool [...] was
  interrupted``, ``... was not executed``);
- the person's words that the extension wraps into a result or a notice (an ``<answer>`` to a
  question, ``<feedback>`` on a result or a completion, the ``<user_message>`` of a task
  resumed) are a user message, and leave the tool's output;
- the extension's notices (``[ERROR] You did not use a tool…``, ``[TASK RESUMPTION] This task
  was interrupted…``, ``[NOTE] …``) are system messages of their first paragraph.

Dropped on purpose: the environment details; the rest of a notice (fixed instructions to the
model: the tool-use reminder, the notes on resuming); the lead-ins of the person's words
(``New instructions for task continuation:``); "The user did not provide a new message".

A task whose conversation file is missing or empty (it is written after the panel's, and can
be pruned) is read from the panel (``ui_messages.json``): ``task``, ``user_feedback`` (and
Roo's ``text`` before the first request) are user messages; the model's ``text``,
``reasoning``, ``completion_result``, questions and plans an assistant message per request,
with the tools it asked for (``tool``, ``command``, ``use_mcp_server``, ``browser_action_launch``,
``new_task``) as its calls; ``command_output`` (its chunks joined), ``mcp_server_response`` and
``browser_action_result`` tool messages; ``error`` a system message. The panel's bookkeeping
(``PANEL_BOOKKEEPING``: checkpoints, retries, resumption asks, warnings, progress) and its
partial messages are left out; a kind of message not known is counted in the session's problems.

Usage: each request to the model is the panel's ``api_req_started`` message, whose text is
JSON with ``tokensIn`` (the input not read from the cache), ``tokensOut``, ``cacheWrites``,
``cacheReads`` and the ``cost`` the extension worked out (a stated cost, kept); it is the
usage of the reply that request produced. Where no request's counts are known, the task's
totals in the task list (Cline's ``taskHistory.json``, Roo's ``history_item.json``:
``tokensIn``, ``tokensOut``, ``cacheWrites``, ``cacheReads``, ``totalCost``) are its last reply's.

Skipped: the panel's messages where the conversation file is read (they repeat it),
checkpoints, ``context_history.json`` and ``settings.json``. A file that is not JSON, or nested
too deeply, is told in the session's problems; one over 1 GB is not read; a task folder
without a conversation in either file is told in the source's problems. Nothing is ever written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents.tool_edits import editor_call

HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
METADATA = "task_metadata.json"
HISTORY_ITEM = "history_item.json"  # Roo Code: the task's entry of the task list
TASK_LIST = Path("state") / "taskHistory.json"  # Cline: the task list, beside tasks/

# Tools written as XML in the text (Cline's format before native tool calls), and the part
# of those that speak to the person, which stays in the text.
XML_TOOLS = [
    "read_file",
    "write_to_file",
    "replace_in_file",
    "apply_diff",
    "insert_content",
    "search_and_replace",
    "execute_command",
    "search_files",
    "list_files",
    "list_code_definition_names",
    "codebase_search",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "load_mcp_documentation",
    "web_fetch",
    "new_task",
    "new_rule",
    "switch_mode",
    "condense",
    "fetch_instructions",
    "report_bug",
    "ask_followup_question",
    "attempt_completion",
    "plan_mode_respond",
]
# the arguments read from a tool written as XML: its path and command, and what an edit tool's holds
XML_ARGUMENTS = ("path", "command", "diff", "content", "line", "search", "replace")
SPOKEN = {"attempt_completion": "result", "ask_followup_question": "question", "plan_mode_respond": "response"}
_XML_OPEN_RE = re.compile(r"<(" + "|".join(XML_TOOLS) + r")>")
_WRAPPERS_RE = re.compile(r"</?(?:task|feedback|user_message|answer)>")
# A tool result's header: "[name] Result:", "[name for '<its argument>'] Result:" (the argument
# as written, quotes and lines and all), "[new_task for creating a new task] Result:".
_RESULT_RE = re.compile(r"\A\s*\[([\w-]+)(?: for (?:'[\s\S]*?'|[^\]\n]*))?\] Result:\s*")
HEADER_SCAN = 64 * 1024  # a header is looked for in a text block's first characters
# The extension's notices in a user record, each a system message of its first paragraph (the
# rest is fixed instructions to the model); prompts whose only part kept is the person's words
# they wrap; and what is its bookkeeping alone.
NOTICES = ("[TASK RESUMPTION]", "[ERROR]", "[NOTE]", "[[NOTE]")
PROMPTS = ("New instructions for task continuation:", "New message to respond to")
QUIET = ("(The user did not provide a new message",)
_NOT_RUN_RE = re.compile(r"(?:Skipping tool \[|Tool \[[^\]\n]{0,200}\] was (?:interrupted|not executed))")
_SPEAKING_RE = re.compile(r"<(feedback|answer|user_message)>")
LEAD_IN = 400  # the line before a wrapper is looked for in this many characters
# The panel's messages that are its bookkeeping: a task read from the panel leaves them out.
PANEL_BOOKKEEPING = frozenset(
    {
        "api_req_finished",
        "api_req_retried",
        "api_req_failed",
        "api_req_deleted",
        "deleted_api_reqs",
        "checkpoint_created",
        "checkpoint_saved",
        "resume_task",
        "resume_completed_task",
        "completion_result",
        "mistake_limit_reached",
        "shell_integration_warning",
        "shell_integration_warning_with_suggestion",
        "info",
        "task_progress",
        "hook_status",
        "hook_output_stream",
        "conditional_rules_applied",
        "subagent_usage",
        "error_retry",
        "diff_error",
        "clineignore_error",
        "rooignore_error",
        "command_permission_denied",
        "condense_context",
        "condense_context_error",
        "browser_action",
        "mcp_notification",
        "mcp_server_request_started",
        "load_mcp_documentation",
        "user_feedback_diff",
        "generate_explanation",
        "subagent",
        "use_subagents",
        "api_req_rate_limit_wait",
        "auto_approval_max_req_reached",
    }
)
COMMAND_APPROVAL = "REQ_APP"  # what Cline appends to a command that asks for approval
_CWD_RE = re.compile(r"# Current (?:Working Directory|Workspace Directory) \(([^)\n]{1,4096})\)")
CWD_SCAN = 64 * 1024  # the environment details are looked for in a first request's first characters
ENVIRONMENT = ("<environment_details>", "</environment_details>")


def check(path: str | Path, expected: str) -> str | None:
    """Why ``path`` is not a source of tasks (a sentence ending with ``expected``), or None."""
    path = Path(path).expanduser()
    if not path.exists():
        return f"{path} does not exist: expected {expected}."
    if not path.is_dir():
        return f"{path} is not a folder: expected {expected}."
    if not task_folders(agents.Root(path)):
        return f"{path} holds no task folder (tasks/<id>/ with {HISTORY} or {UI}): expected {expected}."
    return None


def is_task(folder: Path) -> bool:
    return agents.is_file(folder / HISTORY) or agents.is_file(folder / UI)


def task_folders(root: agents.Root) -> list[Path]:
    """The task folders of a source: itself, the folders of its ``tasks/``, or its own folders."""
    if is_task(root.path):
        return [root.path]
    tasks = root.path / "tasks"
    holder = tasks if agents.is_dir(tasks) and root.allows(tasks) else root.path
    return [folder for folder in root.folders(holder) if is_task(folder)]


def read(path: str | Path, kind: str, problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every task under ``path`` as a session of ``kind``, in the order of the tasks' ids."""
    problems = problems if problems is not None else []
    root = agents.Root(Path(path).expanduser(), problems)
    listed = _task_list(root)
    for folder in task_folders(root):
        session = _task(folder, kind, root, listed)
        if session is None:
            problems.append(f"task {folder.name}: no conversation to read (neither {HISTORY} nor {UI} holds one)")
        else:
            yield session


def _task_list(root: agents.Root) -> dict[str, dict[str, Any]]:
    """Cline's task list (``state/taskHistory.json``, when the source is the folder holding
    ``tasks/``): each task's entry (its workspace, its tokens), by task id ({} without one)."""
    if not agents.is_dir(root.path / "tasks"):
        return {}  # (a source never leaves its folder: a tasks folder's sibling is not read)
    state = root.path / TASK_LIST.parent
    listed = agents.json_file(state / TASK_LIST.name, root) if agents.is_dir(state) and root.allows(state) else None
    found: dict[str, dict[str, Any]] = {}
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, dict) and agents.text_or_none(item.get("id")):
            found[str(item["id"]).strip()] = item
    return found


def _task(folder: Path, kind: str, root: agents.Root, listed: dict[str, dict[str, Any]]) -> agents.Session | None:
    problems: list[str] = []
    history = agents.json_file(folder / HISTORY, root)
    panel = agents.json_file(folder / UI, root)
    metadata = agents.json_file(folder / METADATA, root)
    item = agents.json_file(folder / HISTORY_ITEM, root)
    if history is not None and not isinstance(history, list):
        problems.append(f"{HISTORY}: not a list of messages")
        history = None
    skipped: dict[str, int] = {}
    messages: list[agents.Message] = []
    models: list[str] = []
    listing = listed.get(folder.name) or (item if isinstance(item, dict) else {})
    project = agents.text_or_none(listing.get("cwdOnTaskInitialization")) or agents.text_or_none(
        listing.get("workspace")
    )
    for raw in history or []:
        if not isinstance(raw, dict) or raw.get("role") not in ("user", "assistant"):
            skipped["record of no known shape"] = skipped.get("record of no known shape", 0) + 1
            continue
        if project is None and raw.get("role") == "user":
            found = _CWD_RE.search(_raw_text(raw.get("content"))[:CWD_SCAN])
            project = found[1].strip() if found else None
        messages.extend(_messages(raw, models))
    if messages:
        _place_usage(messages, _requests(panel))
    else:
        messages = _panel_messages(panel, models, skipped)
    if not messages:
        return None
    _listed_usage(messages, listing)
    usages = metadata.get("model_usage") if isinstance(metadata, dict) else None
    for entry in usages if isinstance(usages, list) else []:
        model = agents.text_or_none(entry.get("model_id")) if isinstance(entry, dict) else None
        if model and model not in models:
            models.append(model)
    times = [message.timestamp for message in messages if message.timestamp]
    times += (
        [agents.iso_utc(entry.get("ts")) or "" for entry in panel if isinstance(entry, dict)]
        if isinstance(panel, list)
        else []
    )
    times = sorted(time for time in times if time) or [time for time in [agents.iso_utc(folder.name)] if time]
    first_request = next((message.text for message in messages if message.role == "user" and message.text), "")
    return agents.Session(
        key=folder.name,
        agent=kind,
        title=agents.short_title(first_request) or f"Task {folder.name}",
        messages=messages,
        project=project,
        models=models,
        started=times[0] if times else None,
        last=times[-1] if times else None,
        files=[folder / name for name in (HISTORY, UI, METADATA, HISTORY_ITEM) if agents.is_file(folder / name)],
        problems=problems + agents.skipped_problems(skipped, "message"),
        titled=False,
    )


def _panel_messages(panel: Any, models: list[str], skipped: dict[str, int]) -> list[agents.Message]:
    """The conversation as the panel showed it (``ui_messages.json``), for a task whose
    conversation file is missing or empty: the task and the person's feedback (``task``,
    ``user_feedback``, and a ``text`` before the first request) are user messages; the model's
    ``text``, ``reasoning``, questions and completion an assistant message per request, with the
    tools it asked for as its calls and that request's usage (``api_req_started``); a command's
    output and an MCP server's answer tool messages; an ``error`` a system message."""
    messages: list[agents.Message] = []
    reply: agents.Message | None = None  # the assistant message of the request in progress
    pending: agents.Usage | None = None  # the usage of a request whose reply has not begun
    requested = False
    last: Any = None  # the kind of the panel message before
    for entry in panel if isinstance(panel, list) else []:
        if not isinstance(entry, dict) or entry.get("partial") is True:
            continue
        said = entry.get("say") if entry.get("type") == "say" else entry.get("ask")
        said = said if isinstance(said, str) else None
        previous, last = last, said
        text = str(entry["text"]) if isinstance(entry.get("text"), str) else ""
        timestamp = agents.iso_utc(entry.get("ts"))
        info = entry.get("modelInfo")
        model = agents.text_or_none(info.get("modelId")) if isinstance(info, dict) else None
        if model and model not in models:
            models.append(model)
        if said == "api_req_started":
            used = _request_usage(text)
            pending = used if pending is None else pending + used if used is not None else pending
            requested, reply = True, None
            continue
        if said in ("task", "user_feedback") or (said == "text" and not requested):
            images: list[Any] = entry["images"] if isinstance(entry.get("images"), list) else []
            attached = [agents.attachment("image", data=image) for image in images if isinstance(image, str)]
            words = "\n\n".join([text.strip(), *(item.placeholder() for item in attached)]).strip()
            if words:
                messages.append(agents.Message("user", words, timestamp, attachments=attached))
            reply = None
            continue
        if said in ("command_output", "mcp_server_response", "browser_action_result"):
            if said == "command_output" and previous == said and messages and messages[-1].role == "tool":
                messages[
                    -1
                ].tool_output = f"{messages[-1].tool_output}\n{text.rstrip()}"  # a command's output, in chunks
            elif text.strip():
                messages.append(agents.Message("tool", "", timestamp, tool_output=text.rstrip()))
                reply = None
            continue
        if said == "error":
            if text.strip():
                messages.append(agents.Message("system", text.strip(), timestamp))
            continue
        spoken, call, thought = _panel_reply(said, text)
        if spoken is None and call is None and thought is None:
            if said not in PANEL_BOOKKEEPING:
                skipped[f"panel message {str(said)[:40]}"] = skipped.get(f"panel message {str(said)[:40]}", 0) + 1
            continue
        if reply is None:
            reply = agents.Message("assistant", "", timestamp, model, usage=pending)
            messages.append(reply)
            pending = None
        reply.model = reply.model or model
        if spoken:
            reply.text = f"{reply.text}\n\n{spoken}" if reply.text else spoken
        if thought:
            reply.thinking = f"{reply.thinking}\n\n{thought}" if reply.thinking else thought
        if call is not None:
            reply.tool_calls.append(call)
    if pending is not None:
        replies = [message for message in messages if message.role == "assistant"]
        if replies:
            replies[-1].usage = pending if replies[-1].usage is None else replies[-1].usage + pending
    return messages


def _panel_reply(said: Any, text: str) -> tuple[str | None, agents.ToolCall | None, str | None]:
    """What one of the panel's messages of the model says, the tool it asks for, and its thinking."""
    if said in ("text", "completion_result"):
        return text.strip() or None, None, None
    if said == "reasoning":
        return None, None, text.strip() or None
    if said in ("command", "execute_command"):
        command = text.strip().removesuffix(COMMAND_APPROVAL).strip()
        return None, _call("execute_command", {"command": command}), None
    value = _json_object(text)
    if said in ("followup", "plan_mode_respond", "act_mode_respond"):
        asked = value.get("question") or value.get("response") if value is not None else text
        return agents.text_or_none(asked), None, None
    if said == "tool" and value is not None:
        return None, _call(value.get("tool"), value), None
    if said == "use_mcp_server" and value is not None:
        return None, _call(value.get("toolName") or value.get("type") or "use_mcp_tool", value), None
    if said in ("browser_action_launch", "new_task", "condense", "summarize_task", "report_bug"):
        return None, _call("browser_action" if said == "browser_action_launch" else said, {}), None
    return None, None, None


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = agents.json_value(text)
    except agents.NotJSON:
        return None
    return value if isinstance(value, dict) else None


def _request_usage(text: str) -> agents.Usage | None:
    """The usage of one request to the model, from its ``api_req_started`` message's JSON text."""
    request = _json_object(text)
    if request is None:
        return None
    return agents.usage(
        request.get("tokensIn"),
        request.get("tokensOut"),
        request.get("cacheWrites"),
        request.get("cacheReads"),
        request.get("cost"),
    )


def _requests(panel: Any) -> list[tuple[str | None, agents.Usage]]:
    """The usage of each request to the model, in order: the panel's ``api_req_started``
    messages, whose text is JSON with ``tokensIn`` (the input not read from the cache),
    ``tokensOut``, ``cacheWrites``, ``cacheReads`` and the ``cost`` the extension worked out."""
    found: list[tuple[str | None, agents.Usage]] = []
    for entry in panel if isinstance(panel, list) else []:
        if (
            not isinstance(entry, dict)
            or entry.get("say") != "api_req_started"
            or not isinstance(entry.get("text"), str)
        ):
            continue
        used = _request_usage(entry["text"])
        if used is not None:
            found.append((agents.iso_utc(entry.get("ts")), used))
    return found


def _place_usage(messages: list[agents.Message], requests: list[tuple[str | None, agents.Usage]]) -> None:
    """Each request's usage on the assistant message that answered it: the first one at or after
    the request's time where the messages are timed; else the n-th request's on the n-th reply,
    where there are as many of each; else (requests retried, replies not kept) all on the last reply."""
    replies = [message for message in messages if message.role == "assistant"]
    if not replies or not requests:
        return

    def add(message: agents.Message, used: agents.Usage) -> None:
        message.usage = used if message.usage is None else message.usage + used

    if all(reply.timestamp for reply in replies) and all(time for time, _ in requests):
        for time, used in requests:
            add(next((reply for reply in replies if str(reply.timestamp) >= str(time)), replies[-1]), used)
    elif len(requests) == len(replies):
        for reply, (_, used) in zip(replies, requests, strict=True):
            add(reply, used)
    else:
        for _, used in requests:
            add(replies[-1], used)


def _listed_usage(messages: list[agents.Message], entry: dict[str, Any]) -> None:
    """A task's tokens as its entry in the task list counts them (``tokensIn``, ``tokensOut``,
    ``cacheWrites``, ``cacheReads``, ``totalCost``), on its last reply, where no request's are known."""
    replies = [message for message in messages if message.role == "assistant"]
    if not replies or any(reply.usage for reply in replies):
        return
    replies[-1].usage = agents.usage(
        entry.get("tokensIn"),
        entry.get("tokensOut"),
        entry.get("cacheWrites"),
        entry.get("cacheReads"),
        entry.get("totalCost"),
    )


def _raw_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return (
        "\n".join(
            str(block.get("text"))
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        )
        if isinstance(content, list)
        else ""
    )


def _messages(raw: dict[str, Any], models: list[str]) -> list[agents.Message]:
    """One message of the conversation: a user's (and the tool results it carries) or an assistant's."""
    timestamp = agents.iso_utc(raw.get("ts"))
    info = raw.get("modelInfo")
    model = agents.text_or_none(info.get("modelId")) if isinstance(info, dict) else None
    if model and model not in models:
        models.append(model)
    content = raw.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[agents.ToolCall] = []
    results: list[list[str]] = []
    attached: list[agents.Attachment] = []
    for block in blocks if isinstance(blocks, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "image":
            attached.extend(agents.attachments_of(block) or [agents.attachment("image")])
            texts.append(attached[-1].placeholder())
        elif kind in ("thinking", "reasoning"):
            said = agents.text_or_none(block.get("thinking")) or agents.text_or_none(block.get("text"))
            thinking.extend([said] if said else [])
        elif kind == "tool_use":
            calls.append(_call(block.get("name"), block.get("input")))
        elif kind == "tool_result":
            results.append([agents.parts_text(block.get("content"))])
    if raw["role"] == "assistant":
        text, written = _xml_tools("\n\n".join(texts))
        text, thoughts = _thinking(text)
        thinking = [*thoughts, *thinking]
        return [
            agents.Message(
                "assistant",
                text,
                timestamp,
                model,
                [*written, *calls],
                thinking="\n\n".join(thinking),
                attachments=attached,
            )
        ]
    return _user_messages(texts, results, timestamp, attached)


def _user_messages(
    texts: list[str], results: list[list[str]], timestamp: str | None, attached: list[agents.Attachment]
) -> list[agents.Message]:
    """A user record's messages: its tool results (each a tool message), the extension's notices
    (system messages: their first paragraph), then what the person wrote (a user message, with
    the person's words found in the results and notices)."""
    spoken: list[str] = []
    notes: list[str] = []
    result: list[str] | None = None  # the tool result that the text blocks after its header continue
    for text in texts:
        header = _RESULT_RE.match(text[:HEADER_SCAN])
        start = text[:HEADER_SCAN].lstrip()
        if header:
            result = [text[header.end() :]]
            results.append(result)
        elif _NOT_RUN_RE.match(start):
            result = [text]  # a tool call not run: what the extension said instead of its result
            results.append(result)
        elif start.startswith(NOTICES):
            result = None
            said, rest = _person(text, anywhere=True)
            spoken.extend(said)
            notes.append(rest.strip().partition("\n\n")[0].strip())
        elif start.startswith(PROMPTS):
            result = None
            spoken.extend(_person(text, anywhere=True)[0])
        elif start.startswith(QUIET):
            result = None
        elif start.startswith(ENVIRONMENT[0]) or result is None:
            result = None
            spoken.append(_user_text(text))
        else:
            result.append(text)
    found: list[agents.Message] = []
    for parts in results:
        said, output = _person("\n\n".join(parts).strip())
        spoken.extend(said)
        if output.strip() or not said:
            found.append(agents.Message("tool", "", timestamp, tool_output=output.strip()))
    found += [agents.Message("system", note, timestamp) for note in notes if note]
    text = "\n\n".join(part for part in spoken if part)
    if text:
        return [*found, agents.Message("user", text, timestamp, attachments=attached)]
    if found and attached:
        found[-1].attachments = attached
    return found


def _person(text: str, anywhere: bool = False) -> tuple[list[str], str]:
    """The person's words that the extension wraps in a text it writes (``<feedback>``,
    ``<answer>``, ``<user_message>``), and the text without them. In a tool's output a wrapper
    counts only where it opens the output or follows a line of the extension's about the user
    (\"The user provided the following feedback:\"): elsewhere it is the tool's (a file read)."""
    said: list[str] = []
    kept: list[str] = []
    position = 0
    for opening, closing, position_after in _elements(
        text, _SPEAKING_RE, lambda opening: anywhere or _led_in(text, opening.start())
    ):
        kept.append(text[position : opening.start()])
        said.append(text[opening.end() : closing].strip())
        position = position_after
    kept.append(text[position:])
    return [words for words in said if words], "".join(kept)


def _elements(
    text: str, opening_re: re.Pattern[str], accept: Callable[[re.Match[str]], bool] = lambda opening: True
) -> Iterator[tuple[re.Match[str], int, int]]:
    """The elements ``<name>…</name>`` of ``text`` whose opening tags ``opening_re`` finds (the
    name its first group) and ``accept`` takes, in order: each its opening tag, where its closing
    tag starts and where it ends. Each closing tag is looked for once past the last element; an
    opening tag inside an element, or of a name found unclosed before, is passed over."""
    position = 0
    unclosed: set[str] = set()
    for opening in opening_re.finditer(text):
        name = opening[1]
        if opening.start() < position or name in unclosed:
            continue
        closing = text.find(f"</{name}>", opening.end())
        if closing == -1:
            unclosed.add(name)  # no later one of these closes either
            continue
        if not accept(opening):
            continue
        position = closing + len(name) + 3
        yield opening, closing, position


def _led_in(text: str, start: int) -> bool:
    """Whether a wrapper at ``start`` opens the text, or a line of its own after a line about the user."""
    if start < LEAD_IN and not text[:start].strip():
        return True
    if start == 0 or text[start - 1] != "\n":
        return False
    previous = text[max(0, start - LEAD_IN) : start - 1].rpartition("\n")[2].strip()
    return previous.endswith((":", ".")) and "user" in previous.lower()


def _thinking(text: str) -> tuple[str, list[str]]:
    """An assistant's text without the ``<thinking>`` blocks that models write in it, and those blocks."""
    kept, thoughts = _cut(text, "<thinking>", "</thinking>")
    return kept.strip(), [thought.strip() for thought in thoughts if thought.strip()]


def _user_text(text: str) -> str:
    """A user's text without the environment details the extension appends, and unwrapped."""
    kept, _details = _cut(text, *ENVIRONMENT, unclosed_to_end=True)
    return _WRAPPERS_RE.sub("", kept).strip()


def _cut(text: str, opening: str, closing: str, unclosed_to_end: bool = False) -> tuple[str, list[str]]:
    """``text`` without its ``opening`` … ``closing`` blocks, and their insides, in one pass. A block
    never closed ends the text (``unclosed_to_end``) or stays in it."""
    kept: list[str] = []
    inside: list[str] = []
    position = 0
    while (start := text.find(opening, position)) != -1:
        end = text.find(closing, start + len(opening))
        if end == -1:
            if unclosed_to_end:
                kept.append(text[position:start])
                inside.append(text[start + len(opening) :])
                position = len(text)
            break
        kept.append(text[position:start])
        inside.append(text[start + len(opening) : end])
        position = end + len(closing)
    kept.append(text[position:])
    return "".join(kept), inside


def _call(name: Any, given: Any) -> agents.ToolCall:
    """A tool call from its name and arguments: the files its path arguments name, the command it
    runs, its input and the edits it made."""
    arguments = given if isinstance(given, dict) else {}
    files = agents.named_files(arguments, ("path", "file_path", "paths"))
    command = arguments.get("command")
    return editor_call(
        agents.text_or_none(name) or "tool",
        given,
        files,
        [command.strip()] if isinstance(command, str) and command.strip() else [],
    )


def _xml_tools(text: str) -> tuple[str, list[agents.ToolCall]]:
    """Tools written as XML in an assistant's text: the text without them (but what they say to
    the person), and their calls. Each closing tag is looked for once past the last found."""
    calls: list[agents.ToolCall] = []
    kept: list[str] = []
    position = 0
    for opening, closing, position_after in _elements(text, _XML_OPEN_RE):
        name = opening[1]
        inner = text[opening.end() : closing]
        kept.append(text[position : opening.start()])
        arguments = {key: _tag(inner, key) for key in (*XML_ARGUMENTS, SPOKEN.get(name, "")) if key}
        if name in SPOKEN:
            kept.append(arguments.get(SPOKEN[name]) or "")
        if name not in SPOKEN or name == "attempt_completion":
            calls.append(_call(name, {key: value for key, value in arguments.items() if value}))
        position = position_after
    kept.append(text[position:])
    return "".join(kept).strip(), calls


def _tag(inner: str, name: str) -> str | None:
    start = inner.find(f"<{name}>")
    end = inner.find(f"</{name}>", start + 1) if start != -1 else -1
    return inner[start + len(name) + 2 : end].strip() or None if end != -1 else None
