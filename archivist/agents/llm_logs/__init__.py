"""``llm``'s log database (``logs.db``), read in place and read-only.

A source is the ``logs.db`` file (``llm logs path`` prints it; ``LLM_USER_PATH`` moves it)
or the folder holding it. It is opened read-only and never written, not even a ``-wal`` or
``-shm`` file beside it (``archivist.databases``: a log that holds frames, or a write
left unfinished, is read from a private copy, the latter told). Each query is read to the end
at once, so no lock is held between two of them. A ``logs.db`` that is no regular file (a
pipe) is never opened: it is told as not read.

llm has kept its logs in two sets of tables, and a database may hold both; tables and
columns are looked for, never assumed from a version:

- up to 0.35, ``conversations`` (id, name, model) and ``responses`` (one row per prompt
  and its response, with ``system``, ``datetime_utc``, ``conversation_id``), the tools
  tables ``tool_calls`` (the calls a response made) and ``tool_results`` (the results the
  next response was given), ``prompt_fragments`` / ``system_fragments`` for prompts made
  of fragments, and ``reasoning`` (0.35);
- from 0.36, ``threads`` (id, name, tip) and ``turns`` (one model call: ``thread_id``, the
  message it was given last and the last one it added, ``model``, ``datetime_utc``) over a
  tree of ``messages`` whose ``parts`` are text, reasoning, tool calls, tool results and
  attachments (text may refer to ``fragments``).

A thread reuses the id of the conversation it continues, so both make one session, keyed
by that id: its legacy responses (those that are not also turns) and its turns in time
order. A response with no conversation, or a turn with no thread, is a session of its
own, keyed by its id. Each response gives the system prompt (once, and again when it
changes), the tool results it was given (``tool`` messages), the prompt (``user``) and the
response with its tool calls and reasoning (``assistant``, with the model that answered: its
``resolved_model``, the dated version, where the log names it, else the ``model`` asked for; the
session's models list both). Each turn gives
the messages it added to its thread: those it was given that the session has not shown yet
and those it produced. A thread's messages after its last turn follow, without a time.

A response's (or a turn's, on the last answer it produced) ``input_tokens``,
``output_tokens`` and the cache's counts in its ``token_details`` are its usage.

Tool calls keep their name, with files and commands only where the arguments name them
(``path``, ``file_path``, ``command`` …). The title is the conversation's (or thread's)
name, else the first prompt shortened; there is no working directory, so no project.
Times are ``datetime_utc`` in UTC. A part or row that cannot be read (bad JSON, an unknown
part type or role, a message missing from the tree) is skipped and counted in the
session's problems; a session with no message is not yielded.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archivist import agents
from archivist.agents import NOT_JSON, ROLES, databases

KIND = "llm"

DB_NAME = "logs.db"
EXPECTED = f"llm's {DB_NAME} (the file `llm logs path` prints) or the folder holding it"
CHUNK = 500  # ids per IN (…) query
STORE_TABLES = frozenset({"turns", "messages", "parts"})
FILE_KEYS = ("path", "paths", "file", "files", "file_path", "filepath", "filename", "filenames")
COMMAND_KEYS = ("command", "commands", "cmd", "shell")


def check(path: Path | str) -> str | None:
    """Why ``path`` is not an llm source (a sentence saying what was expected), or None."""
    path = Path(path)
    if not path.exists():
        return f"{path} does not exist: expected {EXPECTED}."
    if path.is_dir():
        if not (path / DB_NAME).exists():
            return f"{path} has no {DB_NAME}: expected {EXPECTED}."
        path = path / DB_NAME
    elif not path.is_file():
        return f"{path} is not a file or a folder: expected {EXPECTED}."
    tables = databases.tables_of(path)
    if isinstance(tables, str):
        return f"{tables}: expected {EXPECTED}."
    if "responses" in tables or tables >= STORE_TABLES:
        return None
    if "logs" in tables:
        return (
            f"{path} holds only the `logs` table of llm before 0.4, which is not read: expected {EXPECTED} "
            "with its `responses` table (or the `threads` and `turns` of llm 0.36 and later)."
        )
    return (
        f"{path} is a SQLite database without llm's `responses` table (nor the `turns`, `messages` and "
        f"`parts` of llm 0.36 and later): expected {EXPECTED}."
    )


def log_files(path: Path) -> list[Path]:
    """What of a source holds its logs: the database, and its write-ahead log, where changes wait."""
    database = agents.log_file(path, DB_NAME)
    return [database, database.with_name(database.name + "-wal")]


def read(path: Path | str, problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every conversation of the database, in the order of their ids (oldest first).

    A database that another program holds locked past ``databases.LOCK_TIMEOUT`` raises Unavailable:
    what is stored of it stays as it is until it can be read. What a damaged one cannot give
    is told as Unread.
    """
    source = Path(path)
    database = agents.log_file(source, DB_NAME)
    if os.path.lexists(database) and not agents.is_file(database):  # (a pipe is never opened)
        if agents.Root(source, problems).allows(database) and (told := databases.irregular(database)) is not None:
            (problems if problems is not None else []).append(told)
        return
    found = agents.confined_log_file(source, DB_NAME, problems)
    if found is None:
        return
    database, root = found
    try:
        connection = databases.connect(database, root.problems)
        with closing(connection):
            reader = _Reader(connection, database)
            failed = 0
            for plan in reader.plans():
                try:
                    session = reader.session(plan)
                except sqlite3.Error as error:
                    if databases.locked(error):
                        raise
                    failed += 1  # a conversation the database cannot give: the others are read
                    continue
                if session is not None:
                    yield session
    except sqlite3.Error as error:
        if databases.locked(error):
            raise databases.unavailable(database, error) from None
        root.problems.append(agents.Unread(f"{database} cannot be read ({error})"))
        return
    if failed:
        root.problems.append(agents.Unread(f"{failed} conversation(s) of {database} cannot be read"))


def _chunks(items: list[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


def _tool_call(name: object, arguments: object, problems: list[str]) -> agents.ToolCall:
    """A tool call with its arguments as its input (a text that is not JSON as it is, a command
    its commands hold left out) and the files and commands they name."""
    call = agents.ToolCall(name=str(name) if name else "tool")
    if isinstance(arguments, str):
        if not arguments.strip():
            return call
        call.input = arguments
        try:
            arguments = agents.json_value(arguments)
        except agents.NotJSON as error:
            problems.append(
                f"the arguments of a {call.name} tool call are {error}"
                if str(error) == NOT_JSON
                else f"the arguments of a {call.name} tool call skipped: {error}"
            )
            return call
    if not isinstance(arguments, dict):
        call.input = agents.call_input(arguments)
        return call
    call.input = agents.call_input(arguments, without=[key for key in COMMAND_KEYS if _kept(arguments.get(key))])
    for keys, into in ((FILE_KEYS, call.files), (COMMAND_KEYS, call.commands)):
        for key in keys:
            value = arguments.get(key)
            values = value if isinstance(value, list) else [value]
            into.extend(item for item in values if isinstance(item, str) and item.strip())
    return call


def _kept(command: Any) -> bool:
    """Whether a command argument is kept whole among a call's commands: a text that is not blank."""
    return isinstance(command, str) and bool(command.strip())


_USAGE_COLUMNS = ("datetime_utc", "input_tokens", "output_tokens", "token_details")
# What is read of each response (the older log) and each turn (the newer).
_RESPONSE_COLUMNS = ("id", "model", "resolved_model", "prompt", "system", "response", "reasoning", *_USAGE_COLUMNS)
_TURN_COLUMNS = ("id", "parent_message_hash", "tip_message_hash", "model", "resolved_model", *_USAGE_COLUMNS)


@dataclass
class _Plan:
    """One session to read: the legacy responses and the turns that make it."""

    key: str
    names: list[str] = field(default_factory=list)
    responses: list[tuple[str, str, int]] = field(default_factory=list)  # (time, id, rowid)
    turns: list[tuple[str, str, int]] = field(default_factory=list)
    tip: str | None = None  # the thread's last message


@dataclass
class _MessageRow:
    parent: str | None
    role: str


class _Reader:
    def __init__(self, connection: sqlite3.Connection, database: Path) -> None:
        self.connection = connection
        self.database = database
        self.tables = databases.tables(connection)
        self.columns: dict[str, set[str]] = {}
        self.calls_by_response: dict[str, list[int]] = {}
        self.results_by_response: dict[str, list[int]] = {}

    def query(self, sql: str, parameters: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        return self.connection.execute(sql, tuple(parameters)).fetchall()

    def has(self, table: str, *columns: str) -> bool:
        if table not in self.tables:
            return False
        if table not in self.columns:
            self.columns[table] = {row[1] for row in self.query(f'PRAGMA table_info("{table}")')}
        return all(column in self.columns[table] for column in columns)

    def select(self, table: str, columns: Iterable[str]) -> str:
        """A select list of ``columns``, NULL for those this version of the table lacks."""
        self.has(table)
        present = self.columns.get(table, set())
        return ", ".join(f'"{column}"' if column in present else f'NULL AS "{column}"' for column in columns)

    # -- which sessions ------------------------------------------------

    def plans(self) -> list[_Plan]:
        plans: dict[str, _Plan] = {}

        def plan(key: str) -> _Plan:
            if key not in plans:
                plans[key] = _Plan(key)
            return plans[key]

        has_turns = self.has("turns", "id")
        if self.has("responses", "id"):
            # A NULL among the turns' ids would make NOT IN unknown, and so false, for every response.
            where = " WHERE id NOT IN (SELECT id FROM turns WHERE id IS NOT NULL)" if has_turns else ""
            columns = self.select("responses", ("conversation_id", "datetime_utc"))
            for rowid, id_, conversation, time in self.query(f"SELECT rowid, id, {columns} FROM responses{where}"):
                if id_ is None:
                    continue
                plan(str(conversation or id_)).responses.append((agents.iso_utc(time) or "", str(id_), rowid))
            if self.has("conversations", "id", "name"):
                for id_, name in self.query("SELECT id, name FROM conversations"):
                    if id_ is not None and str(id_) in plans and name:
                        plans[str(id_)].names.append(str(name))
        if has_turns and self.tables >= STORE_TABLES:
            columns = self.select("turns", ("thread_id", "datetime_utc"))
            for rowid, id_, thread, time in self.query(f"SELECT rowid, id, {columns} FROM turns"):
                if id_ is None:
                    continue
                plan(str(thread or id_)).turns.append((agents.iso_utc(time) or "", str(id_), rowid))
            if self.has("threads", "id", "name", "tip_message_hash"):
                for id_, name, tip in self.query("SELECT id, name, tip_message_hash FROM threads"):
                    if id_ is None:
                        continue
                    if tip is not None or str(id_) in plans:
                        found = plan(str(id_))
                        found.tip = tip
                        if name:
                            found.names.append(str(name))
        if self.has("tool_calls", "response_id"):
            self.calls_by_response = self._index("tool_calls")
        if self.has("tool_results", "response_id"):
            self.results_by_response = self._index("tool_results")
        return [plans[key] for key in sorted(plans)]

    def _index(self, table: str) -> dict[str, list[int]]:
        index: dict[str, list[int]] = {}
        for rowid, response in self.query(f'SELECT rowid, response_id FROM "{table}" ORDER BY rowid'):
            if response is not None:
                index.setdefault(str(response), []).append(rowid)
        return index

    # -- one session ---------------------------------------------------

    def session(self, plan: _Plan) -> agents.Session | None:
        builder = _Builder(self)
        legacy = self._planned("responses", _RESPONSE_COLUMNS, plan.responses)
        turns = self._planned("turns", _TURN_COLUMNS, plan.turns)
        steps: list[tuple[str, str, int, dict[str, Any]]] = [
            (time, id_, 0, row) for (time, id_, _), row in zip(sorted(plan.responses), legacy)
        ] + [(time, id_, 1, row) for (time, id_, _), row in zip(sorted(plan.turns), turns)]
        steps.sort(key=lambda step: step[:3])
        for _time, _id, store, row in steps:
            if store:
                builder.turn(row, after_legacy=bool(plan.responses))
            else:
                builder.response(row)
        if plan.tip is not None:
            builder.rest_of_thread(plan.tip, after_legacy=bool(plan.responses))
        messages = builder.messages
        if not messages:
            return None
        stamps = [message.timestamp for message in messages if message.timestamp]
        models = builder.models
        prompts = [message.text for message in messages if message.role == "user" and message.text.strip()]
        if plan.names:
            title = agents.short_title(plan.names[0])
        elif prompts:
            title = agents.short_title(prompts[0])
        else:
            title = f"llm conversation {plan.key}"
        return agents.Session(
            key=plan.key,
            agent=KIND,
            title=title,
            messages=messages,
            models=models,
            started=stamps[0] if stamps else None,
            last=stamps[-1] if stamps else None,
            files=[self.database],
            problems=builder.problems,
        )

    def _rows(self, table: str, columns: tuple[str, ...], rowids: list[int]) -> dict[int, dict[str, Any]]:
        found: dict[int, dict[str, Any]] = {}
        select = self.select(table, columns)
        for chunk in _chunks(rowids):
            marks = ", ".join("?" * len(chunk))
            for row in self.query(f'SELECT rowid, {select} FROM "{table}" WHERE rowid IN ({marks})', chunk):
                found[row[0]] = dict(zip(columns, row[1:]))
        return found

    def _planned(
        self, table: str, columns: tuple[str, ...], planned: list[tuple[str, str, int]]
    ) -> list[dict[str, Any]]:
        """The rows of ``table`` a plan lists (``(time, id, rowid)``), in time order: ``columns`` of
        each, or only its id where it is gone."""
        rows = self._rows(table, columns, [rowid for _, _, rowid in planned])
        return [rows.get(rowid, {"id": id_}) for _, id_, rowid in sorted(planned)]

    def tool_calls(self, response: str) -> list[dict[str, Any]]:
        rowids = self.calls_by_response.get(response, [])
        rows = self._rows("tool_calls", ("name", "arguments"), rowids)
        return [rows[rowid] for rowid in rowids if rowid in rows]

    def tool_results(self, response: str) -> list[dict[str, Any]]:
        rowids = self.results_by_response.get(response, [])
        rows = self._rows("tool_results", ("name", "output", "exception"), rowids)
        return [rows[rowid] for rowid in rowids if rowid in rows]

    def fragments_of(self, table: str, response: str) -> str:
        """The text of a response's prompt (or system) fragments, in order."""
        if not (self.has(table, "response_id", "fragment_id") and self.has("fragments", "id", "content")):
            return ""
        order = ' ORDER BY "order"' if self.has(table, "order") else ""
        rows = self.query(
            f'SELECT (SELECT content FROM fragments WHERE fragments.id = fragment_id) FROM "{table}"'
            f" WHERE response_id = ?{order}",
            [response],
        )
        return "\n\n".join(str(content) for (content,) in rows if content)

    def message_row(self, hash_: str) -> _MessageRow | None:
        rows = self.query("SELECT parent_hash, role FROM messages WHERE hash = ?", [hash_])
        if not rows:
            return None
        parent, role = rows[0]
        return _MessageRow(parent=parent, role=str(role or ""))

    def parts(self, hashes: list[str]) -> dict[str, list[tuple[Any, ...]]]:
        found: dict[str, list[tuple[Any, ...]]] = {}
        select = self.select("parts", ("message_hash", "position", "type", "tool_name", "text", "payload"))
        for chunk in _chunks(hashes):
            marks = ", ".join("?" * len(chunk))
            for row in self.query(f"SELECT {select} FROM parts WHERE message_hash IN ({marks})", chunk):
                found.setdefault(row[0], []).append(row[1:])
        for rows in found.values():
            rows.sort(key=_part_order)
        return found

    def fragments(self, ids: set[int]) -> dict[int, str]:
        if not ids or not self.has("fragments", "id", "content"):
            return {}
        found: dict[int, str] = {}
        for chunk in _chunks(sorted(ids)):
            marks = ", ".join("?" * len(chunk))
            for id_, content in self.query(f"SELECT id, content FROM fragments WHERE id IN ({marks})", chunk):
                found[id_] = str(content or "")
        return found


class _Builder:
    """One session's messages, from its responses and turns in time order."""

    def __init__(self, reader: _Reader) -> None:
        self.reader = reader
        self.messages: list[agents.Message] = []
        self.problems: list[str] = []
        self.system: str | None = None  # the system prompt last shown
        self.rows: dict[str, _MessageRow | None] = {}
        self.shown: set[str] = set()  # messages of the tree already in the session
        self.models: list[str] = []  # the models asked for and those that answered, in order

    def _model(self, row: dict[str, Any]) -> str | None:
        """The model that answered a response or turn: the one it resolved to (a dated version) where
        the log names it, else the one asked for; both noted among the session's models."""
        named = [str(row[key]).strip() for key in ("model", "resolved_model") if _named(row.get(key))]
        self.models.extend(model for model in dict.fromkeys(named) if model not in self.models)
        return named[-1] if named else None

    # -- legacy responses ----------------------------------------------

    def response(self, row: dict[str, Any]) -> None:
        id_ = str(row.get("id"))
        time = agents.iso_utc(row.get("datetime_utc"))
        model = self._model(row)
        system = row.get("system") or self.reader.fragments_of("system_fragments", id_)
        if system and system != self.system:
            self.messages.append(agents.Message(role="system", text=str(system), timestamp=time))
            self.system = str(system)
        for result in self.reader.tool_results(id_):
            output = str(result.get("output") or "")
            if result.get("exception"):
                output = f"{output}\n{result['exception']}".strip()
            self.messages.append(agents.Message(role="tool", text="", timestamp=time, tool_output=output))
        prompt = row.get("prompt") or self.reader.fragments_of("prompt_fragments", id_)
        if prompt:
            self.messages.append(agents.Message(role="user", text=str(prompt), timestamp=time))
        calls = [
            _tool_call(call.get("name"), call.get("arguments"), self.problems) for call in self.reader.tool_calls(id_)
        ]
        text = str(row.get("response") or "")
        thinking = str(row.get("reasoning") or "")
        if text or calls or thinking:
            self.messages.append(
                agents.Message(
                    role="assistant",
                    text=text,
                    timestamp=time,
                    model=model,
                    tool_calls=calls,
                    thinking=thinking,
                    usage=_usage(row),
                )
            )

    # -- turns of the message tree -------------------------------------

    def turn(self, row: dict[str, Any], after_legacy: bool) -> None:
        time = agents.iso_utc(row.get("datetime_utc"))
        model = self._model(row)
        parent = row.get("parent_message_hash")
        tip = row.get("tip_message_hash")
        given = self._walk(parent, stop=None, trailing=after_legacy and not self.shown)
        produced = self._walk(tip, stop=parent, trailing=False) if tip != parent else []
        self._show(given, time, None)
        before = len(self.messages)
        self._show(produced, time, model)
        # the turn's usage (all its model calls) on the last answer it produced
        answer = next((m for m in reversed(self.messages[before:]) if m.role == "assistant"), None)
        if answer is not None:
            answer.usage = _usage(row)

    def rest_of_thread(self, tip: str, after_legacy: bool) -> None:
        self._show(self._walk(tip, stop=None, trailing=after_legacy and not self.shown), None, None)

    def _row(self, hash_: str) -> _MessageRow | None:
        if hash_ not in self.rows:
            self.rows[hash_] = self.reader.message_row(hash_)
        return self.rows[hash_]

    def _walk(self, start: str | None, stop: str | None, trailing: bool) -> list[str]:
        """The messages from ``start`` back to one already shown (or ``stop``), oldest first.

        ``trailing``: only the run of user and tool messages at the end (what a turn
        continuing a legacy conversation was given that the legacy rows do not hold).
        """
        hashes: list[str] = []
        seen: set[str] = set()
        current = start
        while current is not None and current != stop and current not in self.shown and current not in seen:
            row = self._row(current)
            if row is None:
                self.problems.append(f"message {current} is missing from the messages table")
                break
            if trailing and row.role not in ("user", "tool"):
                break
            hashes.append(current)
            seen.add(current)
            current = row.parent
        hashes.reverse()
        return hashes

    def _show(self, hashes: list[str], time: str | None, model: str | None) -> None:
        if not hashes:
            return
        parts = self.reader.parts(hashes)
        references = {
            piece["fragment"]
            for rows in parts.values()
            for row in rows
            for piece in _text_ref(row[4])
            if isinstance(piece.get("fragment"), int)
        }
        fragments = self.reader.fragments(references)
        for hash_ in hashes:
            self.shown.add(hash_)
            row = self._row(hash_)
            if row is None:
                continue
            message = self._message(row.role, parts.get(hash_, []), fragments, time, model)
            if message is not None:
                self.messages.append(message)

    def _message(
        self,
        role: str,
        parts: list[tuple[Any, ...]],
        fragments: dict[int, str],
        time: str | None,
        model: str | None,
    ) -> agents.Message | None:
        if role not in ROLES:
            self.problems.append(f"a message with the unknown role {role!r} skipped")
            return None
        texts: list[str] = []
        thinking: list[str] = []
        calls: list[agents.ToolCall] = []
        outputs: list[str] = []
        for _position, kind, tool_name, stored_text, payload in parts:
            read = self._part(kind, stored_text, payload, fragments)
            if read is None:
                continue
            data, text = read
            if kind == "text":
                if text:
                    texts.append(str(text))
            elif kind == "reasoning":
                if text:
                    thinking.append(str(text))
            elif kind == "tool_call":
                calls.append(_tool_call(tool_name or data.get("name"), data.get("arguments"), self.problems))
            elif kind == "tool_result":
                output = data.get("output")
                output = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
                if data.get("exception"):
                    output = f"{output}\n{data['exception']}".strip()
                outputs.append(output)
            elif kind == "attachment":
                continue
            else:
                self.problems.append(f"a part of the unknown type {kind!r} skipped")
        if role == "system":
            text = "\n\n".join(texts)
            if not text or text == self.system:
                return None
            self.system = text
            return agents.Message(role="system", text=text, timestamp=time)
        if role == "user" and outputs and not texts:
            role = "tool"
        if not (texts or thinking or calls or outputs):
            return None
        return agents.Message(
            role=role,
            text="\n\n".join(texts),
            timestamp=time,
            model=model if role == "assistant" else None,
            tool_calls=calls,
            thinking="\n\n".join(thinking),
            tool_output="\n\n".join(outputs),
        )

    def _part(self, kind: str, text: Any, payload: Any, fragments: dict[int, str]) -> tuple[dict[str, Any], Any] | None:
        """A part's payload and its text (where the payload refers to fragments, put together from
        them); None where the payload cannot be read (told in the problems)."""
        try:
            data = agents.json_value(payload) if payload else {}
        except agents.NotJSON as error:
            self.problems.append(f"a {kind} part whose payload is {error} skipped")
            return None
        if not isinstance(data, dict):
            self.problems.append(f"a {kind} part whose payload is not an object skipped")
            return None
        if text is None and "text_ref" in data:
            text = "".join(
                str(piece["literal"]) if "literal" in piece else fragments.get(_fragment_id(piece), "")
                for piece in _text_ref(payload)
            )
        if text is None and isinstance(data.get("text"), str):
            text = data["text"]
        return data, text


def _named(value: Any) -> bool:
    """Whether a model column names a model: a text that is not blank."""
    return isinstance(value, str) and bool(value.strip())


def _part_order(row: tuple[Any, ...]) -> tuple[int, float]:
    """A part's place in its message: by its position, and last where that is missing or not a
    number (values of different types cannot be compared)."""
    position = row[0]
    if isinstance(position, int | float) and not isinstance(position, bool):
        return (0, position)
    return (1, 0)


def _fragment_id(piece: dict[str, Any]) -> int:
    """The fragment a ``text_ref`` piece refers to; 0 (none) where it names none (or a list, an object…)."""
    fragment = piece.get("fragment")
    return fragment if isinstance(fragment, int) else 0


def _text_ref(payload: object) -> list[dict[str, Any]]:
    """The ``text_ref`` pieces of a part's payload (literals and fragment ids), if any."""
    if not isinstance(payload, str) or "text_ref" not in payload:
        return []
    try:
        data = agents.json_value(payload)
    except agents.NotJSON:
        return []
    pieces = data.get("text_ref") if isinstance(data, dict) else None
    return [piece for piece in pieces if isinstance(piece, dict)] if isinstance(pieces, list) else []


def _usage(row: dict[str, Any]) -> agents.Usage | None:
    """A response's ``input_tokens`` and ``output_tokens``, with the cache's from its
    ``token_details`` (JSON as the model's plugin stores it: Anthropic's
    ``cache_creation_input_tokens`` and ``cache_read_input_tokens``, apart from the input;
    OpenAI's ``prompt_tokens_details.cached_tokens``, counted in the input)."""
    try:
        details = agents.json_value(row["token_details"]) if isinstance(row.get("token_details"), str) else None
    except agents.NotJSON:
        details = None
    details = details if isinstance(details, dict) else {}
    prompt = details.get("prompt_tokens_details")
    cached = agents.whole_count(prompt.get("cached_tokens")) if isinstance(prompt, dict) else 0
    return agents.usage(
        input=max(0, agents.whole_count(row.get("input_tokens")) - cached),
        output=row.get("output_tokens"),
        cache_write=details.get("cache_creation_input_tokens"),
        cache_read=agents.whole_count(details.get("cache_read_input_tokens")) + cached,
    )
