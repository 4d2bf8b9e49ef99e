"""The Kiro CLI's sessions (``kiro-cli``, formerly the Amazon Q Developer CLI), read for ``kiro``.

The Kiro CLI keeps two stores:

- ``~/.kiro/sessions/cli/<session id>.jsonl``, one session each, appended to: one record a
  line, ``{"version": "v1", "kind", "data"}``, with ``data`` holding ``message_id`` and
  ``content``, a list of ``{"kind", "data"}`` blocks. ``Prompt`` is the person's request
  (``text`` blocks; ``meta.timestamp`` in Unix seconds), ``AssistantMessage`` the agent's
  answer (``text`` blocks, ``thinking`` blocks, and ``toolUse`` blocks: ``toolUseId``,
  ``name``, ``input``), ``ToolResults`` what the tools returned (``toolResult`` blocks:
  ``toolUseId``, ``status`` and ``content``, blocks of ``text`` or ``json``). Beside it,
  ``<session id>.json`` holds ``session_id``, ``cwd``, ``title``, ``created_at`` and
  ``updated_at``, and ``session_state``: the model (``rts_model_state.model_info.model_id``)
  and one entry a turn in ``conversation_metadata.user_turn_metadatas`` (``message_ids``,
  ``end_timestamp``, ``input_token_count``, ``output_token_count``). The shape is the one
  public readers agree on (kenn-io/agentsview ``internal/parser/kiro.go``; junhoyeo/tokscale's
  Kiro session parser, which reads the companion file's turns).
- ``data.sqlite3`` in its data folder (``~/.local/share/kiro-cli``, ``~/Library/Application
  Support/kiro-cli``; Amazon Q's ``amazon-q``): the table ``conversations_v2`` (``key``, the
  working folder; ``conversation_id``; ``value``; ``created_at``/``updated_at`` in Unix ms),
  and ``conversations`` (``key``, ``value``) before it. A value is the chat's state as
  aws/amazon-q-developer-cli serializes it (``crates/chat-cli/src/cli/chat/conversation.rs``
  and ``message.rs``): ``conversation_id``, ``model_info.model_id`` (or ``model``) and
  ``history``, entries ``{user, assistant, request_metadata}`` (a pair ``[user, assistant]``
  in older versions). A user message's ``content`` is ``{"Prompt": {"prompt"}}``,
  ``{"ToolUseResults": {"tool_use_results"}}`` or ``{"CancelledToolUses": {…}}``, with its
  ``timestamp``; an answer is ``{"Response": {message_id, content}}`` or ``{"ToolUse":
  {message_id, content, tool_uses}}`` (``id``, ``name``, ``args``); a result's content is a
  list of ``{"Text": …}`` or ``{"Json": …}``. ``request_metadata`` dates the answer
  (``stream_end_timestamp_ms``, else ``request_start_timestamp_ms``).

A store with no conversation (the tables empty, or not made yet) is a source with no session.
Dropped on purpose: ``Clear`` records (the transcript goes on being kept), the context a
request carried (``additional_context``, ``env_context``), the request still being written
(``next_message``), tools' specifications and an image's data. The token counts are taken
where a turn records them above 0 (the CLI has mostly written 0): no estimate is made.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import databases
from archivist.agents.kiro.sessions import read_lines
from archivist.agents.kiro.workspace import FILE_KEYS, titled_session
from archivist.agents.tool_edits import editor_call

CLI = "cli"
STORE = "data.sqlite3"
TABLES = ("conversations_v2", "conversations")
STORE_TABLES = {*TABLES, "migrations", "state", "history", "auth_kv"}  # what the CLI's store holds
SHELLS = ("execute_bash", "execute_cmd", "executeBash", "shell", "bash")
MAX_OUTPUT_CHARS = 1_000_000
BOOKKEEPING = ("Clear",)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def tool_call(name: Any, arguments: Any) -> agents.ToolCall:
    """A Kiro CLI tool call: its name, the files its arguments name (``fs_read``'s operations
    included), the command a shell tool runs (``write``'s ``command`` is no shell command), its
    input and the edits it made."""
    given = _object(arguments)
    named = agents.text_or_none(name) or "tool"
    files = agents.named_files(given, FILE_KEYS)
    for operation in _list(given.get("operations")):
        files += agents.named_files(_object(operation), FILE_KEYS)
    command = agents.text_or_none(given.get("command")) if named in SHELLS else None
    return editor_call(named, arguments, list(dict.fromkeys(files)), [command] if command else [])


# -- the JSONL sessions --------------------------------------------------------------------------


def session_files(folder: Path, root: agents.Root) -> list[Path]:
    """The sessions of a ``cli`` folder: its ``.jsonl`` files."""
    return [file for file in root.files(folder, ".jsonl") if not file.name.startswith(".")]


def is_session_file(file: Path) -> bool:
    """Whether ``file`` is a Kiro CLI session: a ``.jsonl`` whose first record is one (``version``
    and ``kind``), or one with its companion ``.json`` beside it."""
    if file.suffix != ".jsonl" or not agents.is_file(file):
        return False
    if agents.is_file(file.with_suffix(".json")):
        return True
    try:
        with file.open("rb") as handle:
            for raw, _ in agents.lines(handle):
                if raw is not None and raw.strip():
                    record = agents.json_value(raw)
                    return isinstance(record, dict) and "kind" in record and "version" in record
    except (OSError, agents.NotJSON):
        return False
    return False


def session_id(file: Path, root: agents.Root) -> str | None:
    """The session's id as its companion file says it."""
    return agents.text_or_none(_object(agents.json_file(file.with_suffix(".json"), root)).get("session_id"))


def cli_session(file: Path, key: str, kind: str, root: agents.Root) -> tuple[agents.Session | None, list[str]]:
    """One ``cli/<id>.jsonl`` session, with its companion ``.json``, or None and why."""
    companion = file.with_suffix(".json")
    meta = _object(agents.json_file(companion, root)) if agents.is_file(companion) and root.allows(companion) else {}
    messages: list[agents.Message] = []
    ids: dict[str, agents.Message] = {}
    problems = read_lines(file, lambda record: _record(record, messages, ids))
    if not any(m.text for m in messages):
        return None, problems + ["no message to read"]
    state = _object(meta.get("session_state"))
    model = agents.text_or_none(_object(_object(state.get("rts_model_state")).get("model_info")).get("model_id"))
    _turns(_list(_object(state.get("conversation_metadata")).get("user_turn_metadatas")), ids)
    for message in messages:
        if message.role == "assistant":
            message.model = model
    session = titled_session(
        kind,
        key,
        agents.text_or_none(meta.get("title")),
        messages,
        project=agents.text_or_none(meta.get("cwd")),
        models=[model] if model else [],
        files=[path for path in (file, companion) if agents.is_file(path)],
        problems=problems,
        started=agents.iso_utc(meta.get("created_at")),
        updated=agents.iso_utc(meta.get("updated_at")),
    )
    return session, problems


def _record(record: Any, messages: list[agents.Message], ids: dict[str, agents.Message]) -> str | None:
    """Add one line's record to ``messages``; why it was skipped, if it was."""
    if not isinstance(record, dict):
        return "a record that is not an object"
    kind, data = record.get("kind"), _object(record.get("data"))
    blocks = [_object(block) for block in _list(data.get("content"))]
    message_id = agents.text_or_none(data.get("message_id"))
    if kind == "Prompt":
        said = _texts(blocks)
        attachments = [agents.attachment(_image_type(block), None) for block in blocks if block.get("kind") == "image"]
        if said or attachments:
            when = agents.iso_utc(_object(data.get("meta")).get("timestamp"))
            messages.append(agents.Message("user", said, when, attachments=attachments))
    elif kind == "AssistantMessage":
        thinking = "\n\n".join(
            piece
            for piece in (_thought(block.get("data")) for block in blocks if block.get("kind") == "thinking")
            if piece
        )
        calls = [
            tool_call(_object(block.get("data")).get("name"), _object(block.get("data")).get("input"))
            for block in blocks
            if block.get("kind") == "toolUse"
        ]
        said = _texts(blocks)
        if said or calls or thinking:
            message = agents.Message("assistant", said, tool_calls=calls, thinking=thinking)
            messages.append(message)
            if message_id:
                ids[message_id] = message
    elif kind == "ToolResults":
        for block in blocks:
            if block.get("kind") == "toolResult":
                result = _object(block.get("data"))
                messages.append(agents.Message("tool", "", tool_output=_result_text(result.get("content"))))
    elif kind not in BOOKKEEPING:
        return "a record of unknown kind"
    return None


def _texts(blocks: list[dict[str, Any]]) -> str:
    pieces = [
        block["data"].strip() for block in blocks if block.get("kind") == "text" and isinstance(block.get("data"), str)
    ]
    return "\n\n".join(piece for piece in pieces if piece)


def _thought(data: Any) -> str:
    if isinstance(data, str):
        return data.strip()
    return (agents.text_or_none(_object(data).get("text")) or "").strip()


def _image_type(block: dict[str, Any]) -> str:
    media = agents.text_or_none(_object(block.get("data")).get("format"))
    return f"image/{media}" if media else "image"


def _result_text(content: Any) -> str:
    """What a tool returned: its ``text`` blocks, and its ``json`` blocks as JSON."""
    pieces: list[str] = []
    for block in _list(content) if not isinstance(content, str) else [{"kind": "text", "data": content}]:
        block = _object(block)
        value = block.get("data")
        if block.get("kind") == "text" and isinstance(value, str):
            pieces.append(value)
        elif block.get("kind") == "image":
            pieces.append("[image]")
        elif value is not None:
            pieces.append(json.dumps(value, ensure_ascii=False))
    return "\n".join(pieces)[:MAX_OUTPUT_CHARS]


def _turns(turns: list[Any], ids: dict[str, agents.Message]) -> None:
    """Each turn's end time and tokens, on its last answer."""
    for turn in turns:
        turn = _object(turn)
        answers = [ids[name] for name in _list(turn.get("message_ids")) if isinstance(name, str) and name in ids]
        if not answers:
            continue
        last = answers[-1]
        last.timestamp = last.timestamp or agents.iso_utc(turn.get("end_timestamp"))
        last.usage = agents.usage(input=turn.get("input_token_count"), output=turn.get("output_token_count"))


# -- the SQLite store ----------------------------------------------------------------------------


def store_tables(database: Path) -> set[str] | str:
    """The tables of a store, or why it is none (a phrase to follow its path). An empty file is a
    store SQLite has not written yet: no tables."""
    try:
        if database.stat().st_size == 0 and agents.is_file(database):
            return set()
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    found = databases.tables_of(database)
    if isinstance(found, str):
        return found.removeprefix(f"{database} ")
    return found


def why_not_store(database: Path) -> str | None:
    """Why ``database`` is not the Kiro CLI's store (a phrase to follow its path), or None: a
    database with none of its tables, or no tables at all (made and not written yet), is one."""
    found = store_tables(database)
    if isinstance(found, str):
        return found
    if found and not found & STORE_TABLES:
        return f"has none of the Kiro CLI's tables ({', '.join(TABLES)})"
    return None


def store_sessions(
    database: Path, kind: str, root: agents.Root, shown: str, used: set[str]
) -> Iterator[agents.Session]:
    """The conversations of a Kiro CLI (or Amazon Q CLI) ``data.sqlite3``, newest table first."""
    irregular = databases.irregular(database, shown)
    if irregular is not None:
        root.problems.append(irregular)
        return
    found = store_tables(database)
    if isinstance(found, str):
        root.problems.append(agents.Unread(f"{shown} {found}"))
        return
    if not found & set(TABLES):
        return  # (made and not written yet: no conversation)
    rows: list[tuple[Any, ...]] = []
    with databases.reading(database, root.problems, shown):
        with closing(databases.connect(database, root.problems, shown=shown)) as connection:
            tables = databases.tables(connection)
            if "conversations_v2" in tables:
                rows += connection.execute(
                    f"SELECT key, conversation_id, {databases.bounded('value')}, created_at, updated_at "
                    "FROM conversations_v2 ORDER BY created_at, rowid"
                ).fetchall()
            if "conversations" in tables:
                rows += [
                    (cwd, None, value, None, None)
                    for cwd, value in connection.execute(
                        f"SELECT key, {databases.bounded('value')} FROM conversations ORDER BY rowid"
                    ).fetchall()
                ]
    skipped: dict[str, int] = {}
    for cwd, conversation, value, created, updated in rows:
        try:
            state = agents.json_value(value) if value is not None else None
        except agents.NotJSON:
            state = None
        if not isinstance(state, dict):
            reason = "too large to read" if value is None else "not a conversation's JSON"
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        name = agents.text_or_none(conversation) or agents.text_or_none(state.get("conversation_id"))
        if not name or name in used:
            continue  # (the older table's copy of a conversation the newer one holds)
        conversation_read = _conversation(state, name, kind, agents.text_or_none(cwd), database, created, updated)
        if conversation_read is None:
            continue
        used.add(name)
        yield conversation_read
    if skipped:
        root.problems.append(
            agents.Unread(
                f"{shown}: "
                + "; ".join(f"{count} conversation{'s' if count != 1 else ''} {why}" for why, count in skipped.items())
            )
        )


def _conversation(
    state: dict[str, Any], key: str, kind: str, cwd: str | None, database: Path, created: Any, updated: Any
) -> agents.Session | None:
    model = agents.text_or_none(_object(state.get("model_info")).get("model_id")) or agents.text_or_none(
        state.get("model")
    )
    messages: list[agents.Message] = []
    skipped = 0
    for entry in _list(state.get("history")):
        if isinstance(entry, list) and len(entry) == 2:
            user, answer, meta = entry[0], entry[1], {}
        elif isinstance(entry, dict):
            user, answer, meta = entry.get("user"), entry.get("assistant"), _object(entry.get("request_metadata"))
        else:
            skipped += 1
            continue
        messages += _user(_object(user))
        said = _answer(_object(answer), meta, model)
        if said is not None:
            messages.append(said)
    problems = [f"{skipped} history entr{'ies' if skipped != 1 else 'y'} of no known shape skipped"] if skipped else []
    if not any(m.text for m in messages):
        return None
    models = list(dict.fromkeys(m.model for m in messages if m.model))
    times = sorted(time for time in (m.timestamp for m in messages) if time)
    first = next((m.text for m in messages if m.role == "user" and m.text), "")
    return agents.Session(
        key=key,
        agent=kind,
        title=agents.short_title(first) if first else "Untitled session",
        messages=messages,
        project=cwd,
        models=models,
        started=(times[0] if times else None) or agents.iso_utc(created),
        last=(times[-1] if times else None) or agents.iso_utc(updated),
        files=[database],
        problems=problems,
    )


def _user(user: dict[str, Any]) -> list[agents.Message]:
    content = _object(user.get("content"))
    when = agents.iso_utc(user.get("timestamp"))
    found: list[agents.Message] = []
    for variant, body in content.items():
        body = _object(body)
        for result in _list(body.get("tool_use_results")):
            result = _object(result)
            found.append(agents.Message("tool", "", when, tool_output=_q_result(result.get("content"))))
        prompt = agents.text_or_none(body.get("prompt"))
        if variant in ("Prompt", "CancelledToolUses") and prompt:
            images = [agents.attachment(_q_image(image), None) for image in _list(user.get("images"))]
            found.append(agents.Message("user", prompt.strip(), when, attachments=images))
    return found


def _q_image(image: Any) -> str:
    media = agents.text_or_none(_object(image).get("format"))
    return f"image/{media}" if media else "image"


def _q_result(content: Any) -> str:
    pieces: list[str] = []
    for block in _list(content):
        block = _object(block)
        if isinstance(block.get("Text"), str):
            pieces.append(block["Text"])
        elif "Json" in block:
            pieces.append(json.dumps(block["Json"], ensure_ascii=False))
    return "\n".join(pieces)[:MAX_OUTPUT_CHARS]


def _answer(answer: dict[str, Any], meta: dict[str, Any], model: str | None) -> agents.Message | None:
    for variant, body in answer.items():
        body = _object(body)
        if variant not in ("Response", "ToolUse"):
            continue
        said = (agents.text_or_none(body.get("content")) or "").strip()
        thinking = _thought(_object(body.get("thinking")).get("text") or body.get("thinking"))
        calls = [tool_call(_object(use).get("name"), _object(use).get("args")) for use in _list(body.get("tool_uses"))]
        if not (said or calls or thinking):
            return None
        when = agents.iso_utc(meta.get("stream_end_timestamp_ms")) or agents.iso_utc(
            meta.get("request_start_timestamp_ms")
        )
        used = agents.text_or_none(meta.get("model_id")) or model
        return agents.Message("assistant", said, when, model=used, tool_calls=calls, thinking=thinking)
    return None
