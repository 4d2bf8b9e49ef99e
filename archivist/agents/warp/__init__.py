"""Warp's agent conversations, read in place from its ``warp.sqlite``: the person's prompts and
the commands the agent ran, since Warp keeps no reply of the agent on the machine.

Warp (the terminal, closed source) keeps its state in the SQLite database ``warp.sqlite`` of its
data folder (``~/.local/state/warp-terminal`` on Linux; ``~/Library/Group Containers/
2BBY89MBSN.dev.warp/Library/Application Support/dev.warp.Warp-Stable`` on macOS;
``~/AppData/Local/warp/Warp/data`` on Windows). The shape is learned from agentsview's reader
(kenn-io/agentsview ``internal/parser/warp.go``, ``warp_paths.go`` and ``warp_test.go``) and the
schema notes public adapters of the file share:

- ``ai_queries``: one row an exchange, ``exchange_id``, ``conversation_id``, ``start_ts``
  (SQLite's UTC text), ``input`` (JSON: ``[{"Query": {"text": …, "context": [{"Directory":
  {"pwd": …}}, {"Git": {"head": …}}, …]}}]``; an exchange the agent went on with alone holds
  ``[]``), ``working_directory``, ``output_status`` and ``model_id``;
- ``blocks``: the terminal's command blocks; one the agent ran names its conversation in
  ``ai_metadata`` (JSON: ``conversation_id``, ``action_id``), with its ``stylized_command`` and
  ``stylized_output`` (text with the terminal's ANSI codes), ``exit_code``, ``start_ts`` and
  ``completed_ts``;
- ``agent_conversations``: one row a conversation, ``conversation_data`` (JSON) holding its
  ``conversation_usage_metadata``: ``token_usage[]`` (each model's total ``warp_tokens`` and
  ``byok_tokens``, not split into prompt and answer), ``credits_spent`` and each tool's count.

What is read: each exchange's prompt as the person's message (its time, the model the exchange
used), each block the agent ran as its tool call ``run_command`` with the command and its
output (the terminal's codes taken out), in the order of their times. The project is the
first exchange's working directory (else its ``Directory`` context), the branch its ``Git``
context, the title the first prompt. Not there to read: the agent's answers, thinking and
other tool calls (files read, diffs applied), which Warp keeps on its servers; the totals of
``agent_conversations`` are not split as the archive counts usage (each response's prompt and
answer), and are left out. A database another program holds locked is ``Unavailable``; one that
cannot be read or lacks ``ai_queries`` is told as ``Unread``. Nothing is ever written.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import Message, NotJSON, Root, Session, ToolCall, Unread, call_input, databases

KIND = "warp"
DATABASE = "warp.sqlite"
_EXPECTED = "expected Warp's data folder (holding warp.sqlite) or its warp.sqlite"
QUERIES = ("exchange_id", "conversation_id", "start_ts", "input", "working_directory", "model_id")
BLOCKS = ("stylized_command", "stylized_output", "exit_code", "start_ts", "completed_ts", "ai_metadata", "pwd")
TOOL = "run_command"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not Warp's data folder or its ``warp.sqlite``, or None."""
    root = Path(path).expanduser()
    if reason := agents.no_source(root, _EXPECTED):
        return reason
    database = root / DATABASE if agents.is_dir(root) else root
    if not os.path.lexists(database):
        return f"{root} holds no {DATABASE}: {_EXPECTED}."
    if databases.irregular(database) is not None:
        return None  # (told when it is read)
    found = databases.tables_of(database)
    if isinstance(found, str):
        return f"{found}: {_EXPECTED}."
    return None if "ai_queries" in found else f"{database} has no ai_queries table: not Warp's database: {_EXPECTED}."


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[Session]:
    """Every agent conversation of the database, in the order they began."""
    problems = problems if problems is not None else []
    root = Root(Path(path).expanduser(), problems)
    database = root.path if root.named is not None else root.path / DATABASE
    if root.named is None and not (os.path.lexists(database) and root.allows(database)):
        return
    if not databases.openable(database, problems):
        return
    queries: list[dict[str, Any]] = []
    blocks: list[dict[str, Any]] = []
    with databases.reading(database, problems):
        with closing(databases.connect(database, problems)) as connection:
            present = databases.tables(connection)
            if "ai_queries" not in present:
                problems.append(Unread(f"{database.name} has no ai_queries table: not Warp's database: not read"))
                return
            queries = _rows(connection, "ai_queries", QUERIES, "start_ts, rowid")
            if "blocks" in present:
                blocks = _rows(connection, "blocks", BLOCKS, "start_ts, rowid", "ai_metadata IS NOT NULL")
    yield from _sessions(queries, _by_conversation(blocks, problems), database, problems)


def _rows(
    connection: sqlite3.Connection, table: str, columns: tuple[str, ...], order: str, where: str = "1"
) -> list[dict[str, Any]]:
    """The rows of ``table`` as dicts of ``columns`` (NULL where a column is not there, or a value too large)."""
    present = {str(row[1]) for row in connection.execute(f'PRAGMA table_info("{table}")').fetchall()}
    if "ai_metadata" in columns and "ai_metadata" not in present:
        return []
    chosen = ", ".join(databases.bounded(c) if c in present else f"NULL AS {c}" for c in columns)
    sorted_by = order if "start_ts" in present else "rowid"
    rows = connection.execute(f'SELECT {chosen} FROM "{table}" WHERE {where} ORDER BY {sorted_by}').fetchall()
    return [dict(zip(columns, row, strict=True)) for row in rows]


def _text(value: Any) -> str | None:
    """A column's text: a blob decoded as UTF-8 (what is not, replaced)."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None


def _json(value: Any) -> Any:
    text = _text(value)
    if text is None:
        return None
    try:
        return agents.json_value(text)
    except NotJSON:
        return None


def _by_conversation(blocks: list[dict[str, Any]], problems: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The blocks the agent ran, by the conversation their ``ai_metadata`` names."""
    found: dict[str, list[dict[str, Any]]] = {}
    unread = 0
    for block in blocks:
        metadata = _json(block["ai_metadata"])
        conversation = agents.text_or_none(metadata.get("conversation_id")) if isinstance(metadata, dict) else None
        if conversation is None:
            unread += 1 if _text(block["ai_metadata"]) not in (None, "", "null") else 0
            continue
        found.setdefault(conversation, []).append(block)
    if unread:
        problems.append(f"{unread} command block{'s' if unread != 1 else ''} of no readable ai_metadata skipped")
    return found


def _sessions(
    queries: list[dict[str, Any]], blocks: dict[str, list[dict[str, Any]]], database: Path, problems: list[str]
) -> Iterator[Session]:
    conversations: dict[str, list[dict[str, Any]]] = {}
    skipped = 0
    for query in queries:
        key = _text(query["conversation_id"])
        if not key or not key.strip() or len(key) > databases.MAX_ID_BYTES:
            skipped += 1
            continue
        conversations.setdefault(key, []).append(query)
    if skipped:
        problems.append(
            f"{database.name}: {skipped} exchange{'s' if skipped != 1 else ''} of no conversation id skipped"
        )
    for key, exchanges in conversations.items():
        session = _session(key, exchanges, blocks.get(key, []), database)
        if session is not None:
            yield session


def _session(key: str, exchanges: list[dict[str, Any]], blocks: list[dict[str, Any]], database: Path) -> Session | None:
    own: list[str] = []
    models: list[str] = []
    project = branch = None
    timed: list[tuple[str, int, Message]] = []
    for order, exchange in enumerate(exchanges):
        model = agents.text_or_none(_text(exchange["model_id"]))
        if model and model not in models:
            models.append(model)
        query = _query(exchange["input"])
        if query is None:
            own.append(f"exchange {order + 1}: its input is no query: skipped")
            continue
        context = _context(query.get("context"))
        project = project or agents.text_or_none(_text(exchange["working_directory"])) or context.get("pwd")
        branch = branch or context.get("head")
        text = agents.text_or_none(query.get("text"))
        if text:
            when = agents.iso_utc(_text(exchange["start_ts"]))
            timed.append((when or "", len(timed), Message("user", text.strip(), when)))
    for block in blocks:
        for message in _ran(block, models[-1] if models else None):
            timed.append((message.timestamp or "", len(timed), message))
    if not any(message.role == "user" for _, _, message in timed):
        return None  # (a conversation of exchanges the agent went on with alone, its prompt gone)
    messages = [message for _, _, message in sorted(timed, key=lambda item: (item[0], item[1]))]
    times = [message.timestamp for message in messages if message.timestamp]
    first = next(message.text for message in messages if message.role == "user")
    return Session(
        key=key,
        agent=KIND,
        title=agents.short_title(first),
        titled=False,
        messages=messages,
        project=project,
        branch=branch,
        models=models,
        started=min(times) if times else None,
        last=max(times) if times else None,
        files=[database],
        problems=own,
    )


def _query(value: Any) -> dict[str, Any] | None:
    """An exchange's ``Query``: {} for an exchange with no prompt (``[]``), None for no known shape."""
    items = _json(value)
    if items == []:
        return {}
    first = items[0] if isinstance(items, list) and items else None
    query = first.get("Query") if isinstance(first, dict) else None
    return query if isinstance(query, dict) else None


def _context(items: Any) -> dict[str, str]:
    """A query's context: its working directory (``pwd``) and its branch (``head``)."""
    found: dict[str, str] = {}
    for item in items if isinstance(items, list) else []:
        for kind, key in (("Directory", "pwd"), ("Git", "head")):
            part = item.get(kind) if isinstance(item, dict) else None
            value = agents.text_or_none(part.get(key)) if isinstance(part, dict) else None
            if value and key not in found:
                found[key] = value
    return found


def _plain(value: Any) -> str:
    """A block's command or output without the terminal's codes."""
    text = _text(value) or ""
    return _ANSI.sub("", text).replace("\r\n", "\n").strip("\n")


def _ran(block: dict[str, Any], model: str | None) -> list[Message]:
    """A command the agent ran: its call, and its output as a tool message."""
    command = _plain(block["stylized_command"]).strip()
    if not command:
        return []
    started = agents.iso_utc(_text(block["start_ts"]))
    ended = agents.iso_utc(_text(block["completed_ts"])) or started
    call = ToolCall(TOOL, commands=[command])
    call.input = call_input({"cwd": _text(block["pwd"])} if _text(block["pwd"]) else {})
    output = _plain(block["stylized_output"])
    code = block["exit_code"]
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        output = f"{output}\n[exit code {code}]" if output else f"[exit code {code}]"
    return [
        Message("assistant", "", started, model=model, tool_calls=[call]),
        Message("tool", "", ended, tool_output=output),
    ]
