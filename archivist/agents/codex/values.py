"""What the records of a Codex rollout hold: their types, a session meta's fields, a message's
text, the harness's context, and tool calls with the files and commands they name."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from archivist.agents import (
    Edit,
    NotJSON,
    ToolCall,
    between,
    call_input,
    json_value,
    named_files,
    parts_text,
    text_or_none,
)
from archivist.agents.apply_patch import find_patch

_ROLLOUT_NAME = re.compile(r"^rollout-.+\.jsonl?$")
ENVELOPE_TYPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
# Newer record types that hold nothing a conversation shows.
TYPES_NOT_READ = {"world_state", "inter_agent_communication", "inter_agent_communication_metadata"}
# Response items written bare (without the envelope) by the older CLIs.
ITEM_TYPES = {
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "local_shell_call_output",
    "web_search_call",
    "tool_search_call",
    "tool_search_output",
    "image_generation_call",
    "compaction",
    "compaction_summary",
    "ghost_snapshot",
}
ITEMS_NOT_READ = {"compaction", "compaction_summary", "ghost_snapshot"}
OUTPUT_TYPES = {"function_call_output", "custom_tool_call_output", "local_shell_call_output", "tool_search_output"}
# The name of a block of harness context a user message can be: <environment_context>…</environment_context>.
_BLOCK_NAME = re.compile(r"[a-z]+(?:[_ ][a-z]+)+")
_INJECTED_PREFIXES = ("# AGENTS.md instructions for", "<user_instructions>", "<environment_context>")
_REQUEST_MARK = "## My request for Codex:"
_USER_SHELL = ("<user_shell_command>", "</user_shell_command>")
# The rest of the line is the name (stripped where it is used: ``(.+?)\s*$`` would try every
# split of a long run of spaces, for hours).
_PATCH_FILE = re.compile(r"^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$", re.MULTILINE)
_PATCH_START = "*** Begin Patch"
_FILE_KEYS = (
    "path",
    "file_path",
    "filepath",
    "file",
    "filename",
    "absolute_path",
    "target_file",
    "paths",
    "file_paths",
)
_SHELL_FLAGS = {"-c", "-lc", "-ic", "-lic", "-Command", "-command", "/c", "/C"}


def meta_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """A session meta's fields (an early variant nests them under ``meta``)."""
    nested = payload.get("meta")
    return {**payload, **nested} if isinstance(nested, dict) else payload


def forked_from(meta: dict[str, Any]) -> str | None:
    return text_or_none(meta.get("forked_from_id"))


def parent_of(meta: dict[str, Any]) -> str | None:
    """The session a sub-agent's transcript belongs to."""
    parent = text_or_none(meta.get("parent_thread_id"))
    source = meta.get("source")
    if parent is None and isinstance(source, dict):
        subagent = source.get("subagent")
        spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
        if isinstance(spawn, dict):
            parent = text_or_none(spawn.get("parent_thread_id"))
    return parent


def is_injected(text: str) -> bool:
    return text.startswith(_INJECTED_PREFIXES) or _is_block(text)


def _is_block(text: str) -> bool:
    """Whether ``text`` is one block of harness context, ``<name …>…</name>``.

    Its name is read from the closing tag, which ends the text. (A regular expression whose
    name could end at any word, the rest of the opening tag being attributes, tried every
    split of a long run of words: hours on one line.)
    """
    if not (text.startswith("<") and text.endswith(">")):
        return False
    close = text.rfind("</")
    name = text[close + 2 : -1]
    if close < 1 or not _BLOCK_NAME.fullmatch(name) or not text.startswith(name, 1):
        return False
    after = 1 + len(name)  # where the opening tag ends (">"), or its attributes start
    if text[after] == ">":
        return after < close
    return text[after].isspace() and 0 <= text.find(">", after) < close


def user_shell(text: str) -> tuple[str, str] | None:
    """The command and the rest (its output) of ``<user_shell_command><command>…</command>…</user_shell_command>``."""
    opening, closing = _USER_SHELL
    if not (text.startswith(opening) and text.endswith(closing)) or len(text) < len(opening) + len(closing):
        return None
    inner = text[len(opening) : -len(closing)].lstrip()
    command = between(inner, "<command>", "</command>")
    if command is None or not inner.startswith("<command>"):
        return None
    return inner[command[0] : command[1]], inner[command[1] + len("</command>") :]


def users_words(text: str) -> str:
    """The user's own request in a message that an editor wrapped in its context."""
    mark = text.find(_REQUEST_MARK)
    return text[mark + len(_REQUEST_MARK) :].strip() if mark >= 0 else text


def tool_call(name: str, raw: Any) -> ToolCall:
    """A tool call with the files its arguments name or patch, the commands it runs, its input,
    and the edits of an ``apply_patch`` patch it carries (``apply_patch``).

    Its input is its arguments less what the call keeps already: a command in ``commands``,
    a patch read into ``edits`` (a text that is only a patch); a text that is not JSON (a
    custom tool's input) is kept as it is.
    """
    args: Any = raw
    text = None  # the input, where it is a text that is not JSON
    if isinstance(raw, str):
        try:
            args = json_value(raw)
        except NotJSON:
            args, text = {"input": raw}, raw
    given = args
    if not isinstance(args, dict):
        args = {"input": args}
    files = named_files(args, _FILE_KEYS)
    commands: list[str] = []
    held: list[str] = []  # the keys whose values the call keeps elsewhere
    for key in ("command", "cmd"):
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            commands.append(value.strip())
            held.append(key)
        elif isinstance(value, list) and value and all(isinstance(item, str) for item in value):
            commands.append(_argv_command(value))
            held.append(key)
    edits: list[Edit] = []
    for key, value in _strings(args):
        if _PATCH_START not in value:
            continue
        files.extend(match.strip() for match in _PATCH_FILE.findall(value))
        patch = find_patch(value)
        if patch is not None:
            edits.extend(patch.edits)
            if not value[: patch.start].strip() and not value[patch.end :].strip():
                held.append(key)
    files = list(dict.fromkeys([*files, *(edit.file for edit in edits)]))
    if text is not None:
        kept = "" if held == ["input"] else text
    else:
        kept = call_input(given, without=held) if isinstance(given, dict) else call_input(given)
    return ToolCall(name=name, files=files, commands=commands, input=kept, edits=edits)


def _strings(args: dict[str, Any]) -> list[tuple[str, str]]:
    """The texts of a call's arguments, each with its key: a value, or an item of a list."""
    found = []
    for key, value in args.items():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                found.append((str(key), item))
    return found


def _argv_command(argv: list[str]) -> str:
    """``["bash", "-lc", "pytest -q"]`` → ``pytest -q``; other argv lists joined as a shell would read them."""
    if len(argv) >= 3 and argv[-2] in _SHELL_FLAGS:
        return argv[-1].strip()
    return shlex.join(argv)


def output_text(output: Any) -> str:
    """A tool's output: plain text, ``{"output": …, "metadata": …}`` as JSON text, or content parts."""
    if isinstance(output, str):
        if output.startswith("{"):
            try:
                decoded = json_value(output)
            except NotJSON:
                return output
            if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
                return str(decoded["output"])
        return output
    if isinstance(output, dict):
        for key in ("output", "content"):
            if isinstance(output.get(key), str | list):
                return output_text(output[key])
        return json.dumps(output, ensure_ascii=False)
    if isinstance(output, list):
        return parts_text(output)
    return ""
