"""Antigravity's plain transcript of one conversation, made messages: one step a line.

The agent's brain keeps, beside the conversation's encrypted stream, a readable log of its steps in
``brain/<conversation id>/.system_generated/logs/``: ``transcript_full.jsonl`` (whole), else
``transcript.jsonl`` (long texts cut to ``<truncated N bytes>``), else, in early versions,
``overview.txt`` in the same lines. Each line is one step: ``step_index`` (its order, with gaps),
``source`` (``USER_EXPLICIT``, ``MODEL`` or ``SYSTEM``), ``type`` (``USER_INPUT``,
``PLANNER_RESPONSE``, ``RUN_COMMAND``, ``CODE_ACTION``, ``GENERIC``, ``SYSTEM_MESSAGE``,
``ERROR_MESSAGE``...), ``status``, ``created_at``, and where it has them ``content``, ``thinking``,
``error`` and ``tool_calls`` (each a ``name`` and its ``args``). Lines are written out of step order
at times: they are read in step order.

A user step's ``content`` wraps the request in ``<USER_REQUEST>`` and adds what the editor showed
(``<ADDITIONAL_METADATA>``: the local time, the open documents) and a change of model
(``<USER_SETTINGS_CHANGE>``: "changed setting `Model Selection` from A to B."): the request is the
message (the whole text where the request is empty, as for comments on a plan), and the model
chosen is the model of the answers that follow. A model's ``PLANNER_RESPONSE`` is an answer with its
thinking and its tool calls; its other steps are the tools' outputs; a system step with text is a
system message. Older versions wrote each argument of a call JSON-encoded (``"\\"/home/a.py\\""``):
such a call's arguments are decoded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from archivist import agents

USER, MODEL = "USER_EXPLICIT", "MODEL"
ANSWER = "PLANNER_RESPONSE"
NO_STEP = "no step (an object with a source or type)"
MODEL_CHANGE = re.compile(r"changed setting `Model Selection` from .*? to (.+?)\.(?:\s|$)")
FILE_KEYS = ("AbsolutePath", "AbsolutePathURI", "TargetFile", "DirectoryPath", "SearchPath", "File", "Path")
COMMAND_KEYS = ("CommandLine",)


def steps(values: Iterable[Any], skipping: agents.Skipping) -> list[dict[str, Any]]:
    """The steps of a transcript's values, in step order (a step with no index stays after the one before it)."""
    found: list[tuple[int, int, dict[str, Any]]] = []
    index = -1
    for order, value in enumerate(values):
        if not isinstance(value, dict) or not (
            isinstance(value.get("source"), str) or isinstance(value.get("type"), str)
        ):
            skipping.skip(NO_STEP)
            continue
        step_index = value.get("step_index")
        if isinstance(step_index, int) and not isinstance(step_index, bool):
            index = step_index
        found.append((index, order, value))
    return [step for _index, _order, step in sorted(found, key=lambda item: (item[0], item[1]))]


def messages(steps: Iterable[dict[str, Any]]) -> Iterator[agents.Message]:
    """The messages of a conversation's steps, in order."""
    model: str | None = None
    for step in steps:
        when = agents.iso_utc(step.get("created_at"))
        content = _text(step.get("content"))
        source, kind = step.get("source"), step.get("type")
        if source == USER or kind == "USER_INPUT":
            model = _model(content) or model
            text = _request(content)
            if text:
                yield agents.Message(role="user", text=text, timestamp=when)
        elif source == MODEL and kind == ANSWER:
            calls = _calls(step.get("tool_calls"))
            thinking = _text(step.get("thinking"))
            if content or thinking or calls:
                yield agents.Message("assistant", content, when, model, calls, thinking)
        elif source == MODEL:
            if content:
                yield agents.Message(role="tool", text="", timestamp=when, tool_output=content)
        else:
            text = "\n".join(part for part in (content, _text(step.get("error"))) if part)
            if text:
                yield agents.Message(role="system", text=text, timestamp=when)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _request(content: str) -> str:
    """What the user asked: the text of ``<USER_REQUEST>`` where it holds one, else the whole step."""
    span = agents.between(content, "<USER_REQUEST>", "</USER_REQUEST>")
    if span is not None and content[span[0] : span[1]].strip():
        return content[span[0] : span[1]].strip()
    return content.strip()


def _model(content: str) -> str | None:
    span = agents.between(content, "<USER_SETTINGS_CHANGE>", "</USER_SETTINGS_CHANGE>")
    if span is None:
        return None
    found = MODEL_CHANGE.search(content, span[0], span[1])
    return found.group(1).strip() if found else None


def _calls(value: Any) -> list[agents.ToolCall]:
    calls: list[agents.ToolCall] = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"]:
            calls.append(_call(item["name"], _arguments(item.get("args"))))
    return calls


def _arguments(value: Any) -> dict[str, Any]:
    """A call's arguments: an object, or the text of one; decoded where every one is JSON-encoded."""
    if isinstance(value, str):
        try:
            value = agents.json_value(value)
        except agents.NotJSON:
            return {}
    if not isinstance(value, dict):
        return {}
    texts = [item for item in value.values() if isinstance(item, str)]
    if texts and all(_encoded(item) for item in texts) and any(item.startswith('"') for item in texts):
        return {key: _decoded(item) if isinstance(item, str) else item for key, item in value.items()}
    return value


def _encoded(text: str) -> bool:
    try:
        agents.json_value(text)
    except agents.NotJSON:
        return False
    return True


def _decoded(text: str) -> Any:
    try:
        return agents.json_value(text)
    except agents.NotJSON:
        return text


def _call(name: str, args: dict[str, Any]) -> agents.ToolCall:
    files = [agents.uri_path(file) or file for file in agents.named_files(args, FILE_KEYS)]
    commands = agents.named_files(args, COMMAND_KEYS)
    edits, kept = _edits(name, args)
    for edit in edits:
        if edit.file not in files:
            files.append(edit.file)
    return agents.ToolCall(
        name=name,
        files=files,
        commands=commands,
        input=agents.call_input(args, without=(*COMMAND_KEYS[: len(commands)], *kept)),
        edits=edits,
    )


def _edits(name: str, args: dict[str, Any]) -> tuple[list[agents.Edit], tuple[str, ...]]:
    """A call's changes to a file, and the keys of the texts they hold."""
    file = args.get("TargetFile")
    if name == "write_to_file" and isinstance(args.get("CodeContent"), str):
        edit = agents.text_edit(file, None, args["CodeContent"])
        return ([edit], ("CodeContent",)) if edit else ([], ())
    if name == "replace_file_content":
        edit = agents.text_edit(file, args.get("TargetContent"), args.get("ReplacementContent"))
        return ([edit], ("TargetContent", "ReplacementContent")) if edit else ([], ())
    if name == "multi_replace_file_content":
        chunks = args.get("ReplacementChunks")
        if isinstance(chunks, str):
            chunks = _decoded(chunks)
        edits = [
            edit
            for chunk in (chunks if isinstance(chunks, list) else [])
            if isinstance(chunk, dict)
            and (edit := agents.text_edit(file, chunk.get("TargetContent"), chunk.get("ReplacementContent")))
        ]
        return (edits, ("ReplacementChunks",)) if edits else ([], ())
    return [], ()
