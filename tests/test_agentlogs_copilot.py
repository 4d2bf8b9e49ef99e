"""Copilot's sessions: a log of changes replayed, damaged lines and files, the oldest sessions kept in a
state.vscdb, attachments and usage, and the CLI's events.

Run as a script, this file writes the sample's ``state.vscdb``
(``sample-agent-logs/copilot/workspaceStorage/<id>/state.vscdb``): VS Code's ``ItemTable`` holding, under
``interactive.sessions``, an older session of the sample's workspace and the copy VS Code left of a
session it moved to a file.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from archivist.agents import Unavailable, Unread, Usage, copilot


def chat(root: Path, name: str, text: str) -> Path:
    folder = root / "workspaceStorage" / "abc" / "chatSessions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


def read(path: Path) -> tuple[list, list[str]]:
    problems: list[str] = []
    return list(copilot.read(path, problems)), problems


REQUEST = {"timestamp": 1764300000000, "message": {"text": "why?"}, "response": [{"value": "because"}]}


def test_a_log_s_changes_are_replayed_and_a_change_that_does_not_fit_is_told(tmp_path: Path) -> None:
    lines = [
        {"kind": 0, "v": {"requests": [], "creationDate": 1764300000000}},
        {"kind": 2, "k": ["requests"], "v": [dict(REQUEST)]},
        {"kind": 2, "k": ["requests", 0, "response"], "i": 0, "v": [{"value": "replaced"}]},  # truncated, then appended
        {"kind": 1, "k": ["requests", 0, "message", "text"], "v": "why not?"},
        {"kind": 1, "k": ["requests", 9, "message"], "v": "nowhere"},  # a path that is not there
        {"kind": 3, "k": ["customTitle"]},
        {"kind": 7},
        "not an object",
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n{not json\n"
    chat(tmp_path, "s.jsonl", text)
    chat(tmp_path, "s.json", json.dumps({"requests": [REQUEST], "customTitle": "the older whole file"}))
    (session,), problems = read(tmp_path)
    assert problems == [] and session.title == "why not?"  # the log, not the older file
    assert [message.text for message in session.messages] == ["why not?", "replaced"]
    assert sorted(session.problems) == [
        "1 line(s) skipped: a change of a path that is not there",
        "1 line(s) skipped: not JSON",
        "2 line(s) skipped: a change of no known shape",
    ]


def test_damaged_and_empty_files_are_told_and_the_others_read(tmp_path: Path) -> None:
    chat(tmp_path, "a.json", "{not json")
    chat(tmp_path, "b.json", json.dumps({"requests": "no"}))
    chat(tmp_path, "c.json", "[" * 5000 + "]" * 5000)
    chat(tmp_path, "d.json", json.dumps({"requests": [REQUEST]}))
    found, problems = read(tmp_path)
    assert [session.messages[0].text for session in found] == ["why?"]
    assert [problem.split(":")[0] for problem in problems] == ["a.json", "b.json", "c.json"]


def test_the_cli_s_bad_lines_are_told_and_a_tool_s_arguments_read_within_the_budget(tmp_path: Path) -> None:
    folder = tmp_path / "session-state" / "s1"
    folder.mkdir(parents=True)
    events = [
        {"type": "user.message", "timestamp": "2025-11-28T04:00:00Z", "data": {"content": "list it"}},
        {
            "type": "assistant.message",
            "timestamp": "2025-11-28T04:00:05Z",
            "data": {
                "content": "ok",
                "toolRequests": [
                    {"name": "bash", "arguments": "[" * 5000 + "]" * 5000},
                    {"name": "view", "arguments": {"path": "/w/a.py"}},
                ],
            },
        },
        {"type": "x", "data": "not an object"},
    ]
    (folder / "events.jsonl").write_text(
        "\n".join(json.dumps(event) for event in events) + "\n{bad\n", encoding="utf-8"
    )
    (session,), _ = read(tmp_path)
    assert [(call.name, call.files, call.commands) for call in session.messages[1].tool_calls] == [
        ("bash", [], []),
        ("view", ["/w/a.py"], []),
    ]
    assert sorted(session.problems) == ["1 line(s) skipped: an event of no known shape", "1 line(s) skipped: not JSON"]


def test_a_link_that_leads_out_is_never_opened_and_a_source_that_is_not_says_so(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"requests": [{"message": {"text": "hunter2"}, "response": [{"value": "x"}]}]}))
    folder = chat(tmp_path / "user", "ok.json", json.dumps({"requests": [REQUEST]})).parent
    (folder / "linked.json").symlink_to(secret)
    found, problems = read(tmp_path / "user")
    assert [session.messages[0].text for session in found] == ["why?"] and len(problems) == 1
    (tmp_path / "empty").mkdir()
    assert "holds no Copilot chat session" in (copilot.check(tmp_path / "empty") or "")
    assert "is not a Copilot chat session file" in (copilot.check(secret) or "")


# --- the oldest sessions, in state.vscdb ------------------------------------------------------------------

LOGS = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "copilot"
WORKSPACE = "8e1f3a2b9c4d5e6f7a8b9c0d1e2f3a4b"
MOVED = "3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"  # the sample's session VS Code moved to a file
OLDER = "5d6e7f80-9a0b-4c1d-8e2f-3a4b5c6d7e8f"
PNG = [137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1]


def state_database(file: Path, value: Any, key: str = "interactive.sessions") -> Path:
    """A state.vscdb of VS Code's shape, holding ``value`` (as JSON, unless it is text) under ``key``."""
    file.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(file)) as connection:
        connection.execute("PRAGMA page_size = 1024")  # a small sample: a few KB
        connection.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        rows = [("workbench.panel.chat.numberOfVisibleViews", "1"), (key, text)]
        connection.executemany("INSERT INTO ItemTable VALUES (?, ?)", rows)
        connection.commit()
        connection.execute("VACUUM")
    return file


def older_session() -> dict[str, Any]:
    """A session of the shape VS Code kept under interactive.sessions (no version: the first one)."""
    return {
        "sessionId": OLDER,
        "creationDate": 1761040800000,  # 2025-10-21T10:00:00Z
        "isImported": False,
        "initialLocation": "panel",
        "requesterUsername": "ana",
        "responderUsername": "GitHub Copilot",
        "requests": [
            {
                "requestId": "request_1",
                "message": {
                    "text": "The forecast tests take forty seconds. Why? The profile is attached.",
                    "parts": [],
                },
                "variableData": {
                    "variables": [
                        {
                            "id": "vscode.image",
                            "name": "Pasted Image",
                            "kind": "image",
                            "isPasted": True,
                            "mimeType": "image/png",
                            "value": {str(i): byte for i, byte in enumerate(PNG)},
                        },
                        {
                            "id": "vscode.implicit.file",
                            "name": "forecast.py",
                            "kind": "implicit",
                            "isFile": True,
                            "value": {
                                "$mid": 1,
                                "path": "/home/ana/projects/weather-api/app/forecast.py",
                                "scheme": "file",
                            },
                        },
                    ]
                },
                "response": [
                    {"value": "Every test builds a new client, and the fixture in ", "isTrusted": False},
                    {
                        "kind": "inlineReference",
                        "inlineReference": {
                            "$mid": 1,
                            "path": "/home/ana/projects/weather-api/tests/conftest.py",
                            "scheme": "file",
                        },
                    },
                    {
                        "value": " sleeps a second to wait out the rate limit. Make the client a session-scoped "
                        "fixture and patch the sleep.",
                        "isTrusted": False,
                    },
                ],
                "result": {
                    "timings": {"firstProgress": 1200, "totalElapsed": 6400},
                    "metadata": {"modelMessageId": "m1", "responseId": "r1", "sessionId": OLDER},
                },
                "followups": [],
                "isCanceled": False,
                "contentReferences": [],
                "codeCitations": [],
            }
        ],
    }


def moved_copy() -> dict[str, Any]:
    """The copy of the sample's first session that VS Code left under the key after writing its file."""
    return {
        "sessionId": MOVED,
        "creationDate": 1764300000000,
        "requests": [{"message": {"text": "an older copy"}, "response": [{"value": "read from the file instead"}]}],
    }


def build_sample(folder: Path = LOGS / "workspaceStorage" / WORKSPACE) -> None:
    (folder / "state.vscdb").unlink(missing_ok=True)
    state_database(folder / "state.vscdb", [older_session(), moved_copy()])


def test_the_sample_s_state_database_keeps_an_older_session_and_the_copy_of_one_moved_to_a_file() -> None:
    problems: list[str] = []
    found = list(copilot.read(LOGS, problems))
    assert problems == [] and len(found) == 4
    whole, logged, older, cli = found
    assert whole.key == f"{WORKSPACE}/{MOVED}" and whole.files[0].name == f"{MOVED}.json"  # the file wins
    assert older.key == f"{WORKSPACE}/{OLDER}" and older.files == [
        LOGS / "workspaceStorage" / WORKSPACE / "state.vscdb"
    ]
    assert older.title == "The forecast tests take forty seconds. Why? The profile is attached."
    assert older.project == "/home/ana/projects/weather-api"
    assert (older.started, older.last) == ("2025-10-21T10:00:00Z", "2025-10-21T10:00:00Z")
    asked, answer = older.messages
    assert asked.text.endswith("The profile is attached.\n\n[image: Pasted Image]")
    assert [(a.type, a.name, a.size) for a in asked.attachments] == [("image/png", "Pasted Image", 24)]
    conftest = "[conftest.py](/home/ana/projects/weather-api/tests/conftest.py)"
    assert answer.text.startswith(f"Every test builds a new client, and the fixture in {conftest} sleeps")
    assert logged.messages[-1].usage == Usage(input=18234, output=412)
    assert whole.messages[0].text.endswith("[file: forecast.py]")
    assert cli.key.startswith("cli/")
    assert copilot.check(LOGS / "workspaceStorage" / WORKSPACE / "state.vscdb") is None


def test_a_state_database_read_alone_and_what_is_not_one(tmp_path: Path) -> None:
    alone = state_database(tmp_path / "w" / "state.vscdb", [older_session(), moved_copy(), "x", {"requests": 5}])
    problems: list[str] = []
    found = list(copilot.read(alone, problems))
    assert [session.key for session in found] == [f"w/{OLDER}", f"w/{MOVED}"]  # no file here: both read
    assert problems == ["w/state.vscdb: 2 of interactive.sessions skipped: not a chat session"]
    other = state_database(tmp_path / "o" / "state.vscdb", {"a": 1}, key="workbench.view")
    assert "holds no interactive.sessions" in (copilot.check(other) or "")
    assert list(copilot.read(other)) == []
    plain = tmp_path / "p" / "state.vscdb"
    plain.parent.mkdir()
    plain.write_text("not a database")
    assert "is not a SQLite database" in (copilot.check(plain) or "")
    (tmp_path / "t").mkdir()
    with closing(sqlite3.connect(tmp_path / "t" / "state.vscdb")) as connection:
        connection.execute("CREATE TABLE t (x)")
    assert "has no ItemTable" in (copilot.check(tmp_path / "t" / "state.vscdb") or "")


def test_a_user_folder_whose_only_sessions_are_in_state_databases(tmp_path: Path) -> None:
    user = tmp_path / "User"
    state_database(user / "workspaceStorage" / "w1" / "state.vscdb", [older_session()])
    (user / "workspaceStorage" / "w1" / "workspace.json").write_text(json.dumps({"folder": "file:///src/weather"}))
    state_database(user / "workspaceStorage" / "w2" / "state.vscdb", {"x": 1}, key="other")
    state_database(user / "globalStorage" / "state.vscdb", [dict(older_session(), sessionId="g1")])
    assert copilot.check(user) is None and copilot.check(user / "workspaceStorage" / "w1") is None
    assert "holds no Copilot chat session" in (copilot.check(user / "workspaceStorage" / "w2") or "")
    found = list(copilot.read(user))
    assert [(session.key, session.project) for session in found] == [(f"w1/{OLDER}", "/src/weather"), ("g1", None)]
    assert [session.key for session in copilot.read(user / "workspaceStorage" / "w1")] == [f"w1/{OLDER}"]


@pytest.mark.parametrize(
    ("value", "told"),
    [
        ("[not json", "interactive.sessions not read (not JSON"),
        ("[" * 5000 + "]" * 5000, "interactive.sessions not read (JSON nested deeper"),
        ({"sessions": []}, "interactive.sessions is not a list of sessions: not read"),
    ],
)
def test_a_value_that_is_no_list_of_sessions_is_told(tmp_path: Path, value: Any, told: str) -> None:
    state_database(tmp_path / "User" / "workspaceStorage" / "w" / "state.vscdb", value)
    chat(tmp_path / "User", "s.json", json.dumps({"requests": [REQUEST]}))
    found, problems = read(tmp_path / "User")
    assert [session.messages[0].text for session in found] == ["why?"]  # the rest is read
    assert len(problems) == 1 and problems[0].startswith(f"w/state.vscdb: {told}")


def test_a_damaged_database_is_unread_and_a_locked_one_unavailable(tmp_path: Path) -> None:
    database = state_database(tmp_path / "User" / "workspaceStorage" / "w" / "state.vscdb", [older_session()])
    whole = database.read_bytes()
    database.write_bytes(whole[:100] + b"\xff" * (len(whole) - 100))  # the header kept, the pages broken
    found, problems = read(tmp_path / "User")
    assert found == [] and len(problems) == 1 and isinstance(problems[0], Unread)
    assert problems[0].startswith("w/state.vscdb cannot be read")
    database.write_bytes(whole)
    holder = sqlite3.connect(database, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        with pytest.raises(Unavailable, match="locked"):
            list(copilot.read(tmp_path / "User"))
        with pytest.raises(Unavailable):
            copilot.check(database)
        assert copilot.check(tmp_path / "User") is None  # a locked database may hold sessions
    finally:
        holder.close()


def test_a_state_database_that_is_a_pipe_is_told_and_the_others_read(tmp_path: Path) -> None:
    user = tmp_path / "User"
    state_database(user / "workspaceStorage" / "w1" / "state.vscdb", [older_session()])
    (user / "workspaceStorage" / "w2").mkdir()
    os.mkfifo(user / "workspaceStorage" / "w2" / "state.vscdb")  # (it would be waited on forever)
    assert copilot.check(user) is None
    found, problems = read(user)
    assert [session.key for session in found] == [f"w1/{OLDER}"]
    assert problems == [
        "w2/state.vscdb is a named pipe (FIFO), not a database file: not read, and what the archive holds of it "
        "is kept. Put the agent's database back in its place for it to be read."
    ]
    assert isinstance(problems[0], Unread)


def test_reading_a_state_database_writes_nothing(tmp_path: Path) -> None:
    database = state_database(tmp_path / "w" / "state.vscdb", [older_session()])
    with closing(sqlite3.connect(database)) as connection:
        connection.execute("PRAGMA journal_mode = WAL")  # as a closed VS Code leaves it: no -wal, no -shm
    before = {path.name: path.read_bytes() for path in database.parent.iterdir()}
    assert len(list(copilot.read(tmp_path))) == 1
    assert {path.name: path.read_bytes() for path in database.parent.iterdir()} == before


# --- what a request attaches, and what it used ------------------------------------------------------------


def test_attachments_are_recorded_with_placeholders_and_their_data_never_kept(tmp_path: Path) -> None:
    variables = [
        {"kind": "image", "name": "shot.png", "value": {"$base64": "iVBORw0KGgo" + "A" * 89}},
        {"kind": "image", "name": "list.png", "value": [1, 2, 3]},
        {"kind": "file", "name": "api.py", "value": {"$mid": 1, "path": "/w/api.py", "scheme": "file"}},
        {"kind": "file", "name": "app.py", "range": {"start": 6, "endExclusive": 18}, "value": "file:///w/app.py"},
        {"kind": "file", "value": {"uri": {"path": "/w/loc.py"}, "range": {}}},
        {"kind": "notebookOutput", "name": "plot", "mimeType": "image/svg+xml", "value": "PHN2Zz48L3N2Zz4="},
        {"kind": "notebookOutput", "name": "table", "mimeType": "text/html", "value": "x"},
        {"kind": "implicit", "name": "open.py", "value": "file:///w/open.py"},
        {"kind": "symbol", "name": "load", "value": {}},
        {"name": "old", "values": [{"level": "full", "value": "x"}]},  # the oldest variables: no kind
        "not a variable",
        {"kind": "image", "value": {"$base64": 5}},
    ]
    request = {
        "timestamp": 1764300000000,
        "message": {"text": "look at #file:app.py"},
        "variableData": {"variables": variables},
        "response": [{"value": "ok"}],
    }
    chat(tmp_path, "s.json", json.dumps({"requests": [request]}))
    (session,), problems = read(tmp_path)
    asked = session.messages[0]
    assert [(a.type, a.name, a.size) for a in asked.attachments] == [
        ("image", "shot.png", 75),
        ("image", "list.png", 3),
        ("file", "api.py", None),
        ("file", "app.py", None),
        ("file", "loc.py", None),
        ("image/svg+xml", "plot", 11),
        ("image", None, None),
    ]
    assert asked.text == (
        "look at #file:app.py\n\n[image: shot.png] [image: list.png] [file: api.py] [file: loc.py] [image: plot] [image]"
    )
    assert "AAAA" not in asked.text and session.title == "look at #file:app.py" and problems == []


def test_a_reply_s_usage_is_the_tokens_copilot_keeps_in_its_result(tmp_path: Path) -> None:
    results = [
        {"metadata": {"promptTokens": 1200, "outputTokens": 80}},
        {"metadata": {"promptTokens": "1200", "outputTokens": -1}},  # no counts
        {"metadata": {"summary": {"usage": {"prompt_tokens": 9, "completion_tokens": 9}}}},  # not the reply's
        "not a result",
    ]
    requests = [dict(REQUEST, result=result) for result in results]
    chat(tmp_path, "s.json", json.dumps({"requests": requests}))
    (session,), _ = read(tmp_path)
    replies = [message for message in session.messages if message.role == "assistant"]
    assert [reply.usage for reply in replies] == [Usage(input=1200, output=80), None, None, None]


def test_a_text_edit_that_put_lines_in_is_an_edit_and_any_other_stays_in_the_call_s_input(tmp_path: Path) -> None:
    def change(text: Any, line: Any, column: Any = 1, end: Any = None, end_column: Any = 1) -> dict[str, Any]:
        place = {"startLineNumber": line, "startColumn": column, "endLineNumber": end or line, "endColumn": end_column}
        return {"text": text, "range": place}

    inserted = change("import time\nimport os\n", 3)
    replaced = change("timeout = 30\n", 4, end=5)
    within = change("seconds", 7, column=5, end_column=12)
    odd = [change(9, 2), change("x\n", True), change("y\n", "2"), "z", None, [change("w\n", 1)]]
    group = {
        "kind": "textEditGroup",
        "uri": {"path": "/srv/app/main.py"},
        "edits": [[inserted, replaced], [within], odd],
    }
    nowhere = {"kind": "textEditGroup", "uri": 5, "edits": [[change("v\n", 1)]]}
    request = dict(REQUEST, response=[{"value": "Edited."}, group, nowhere, {"kind": "textEditGroup", "edits": 3}])
    chat(tmp_path, "s.json", json.dumps({"requests": [request]}))
    (session,), problems = read(tmp_path)
    edit, unplaced, empty = session.messages[1].tool_calls
    assert problems == [] and (edit.name, edit.files) == ("edit", ["/srv/app/main.py"])
    assert [(e.file, e.old, e.new, e.patch) for e in edit.edits] == [
        ("/srv/app/main.py", None, None, "@@ -2,0 +3,2 @@\n+import time\n+import os")
    ]
    assert json.loads(edit.input) == {"edits": [replaced, within, *odd[:4], odd[5]]}  # (a null is nothing)
    assert (unplaced.files, unplaced.edits, json.loads(unplaced.input)) == ([], [], {"edits": [change("v\n", 1)]})
    assert (empty.files, empty.edits, empty.input) == ([], [], "")


def test_the_oldest_shapes_a_string_message_and_response_and_a_computed_title(tmp_path: Path) -> None:
    data = {
        "version": 2,
        "computedTitle": "Plain strings",
        "creationDate": 1764300000000,
        "lastMessageDate": 1764300090000,
        "requests": [
            {"message": "a plain question", "response": "a plain answer"},
            {
                "message": {"text": "refs?"},
                "response": [
                    {"kind": "inlineReference", "name": "load", "inlineReference": {"uri": {"path": "/w/a.py"}}},
                    {"value": " and "},
                    {"kind": "inlineReference", "inlineReference": {"uri": {"path": "/w/b.py"}, "range": {}}},
                    {"kind": "inlineReference", "inlineReference": 5},
                    {"value": ", "},
                    {"kind": "inlineReference", "inlineReference": {"path": "/w/my notes (1).md"}},
                ],
            },
        ],
    }
    chat(tmp_path, "s.json", json.dumps(data))
    (session,), _ = read(tmp_path)
    assert session.title == "Plain strings"
    assert [(m.role, m.text) for m in session.messages] == [
        ("user", "a plain question"),
        ("assistant", "a plain answer"),
        ("user", "refs?"),
        ("assistant", "[`load`](/w/a.py) and [b.py](/w/b.py), [my notes (1).md](</w/my notes (1).md>)"),
    ]
    assert (session.started, session.last) == ("2025-11-28T03:20:00Z", "2025-11-28T03:21:30Z")


def test_a_last_message_date_before_the_session_s_other_times_is_not_taken(tmp_path: Path) -> None:
    data = {"creationDate": 1764300000000, "lastMessageDate": 1732700000000, "requests": [REQUEST]}
    chat(tmp_path, "s.json", json.dumps(data))
    (session,), _ = read(tmp_path)
    assert (session.started, session.last) == ("2025-11-28T03:20:00Z", "2025-11-28T03:20:00Z")


def test_the_sample_cli_session_s_usage_is_its_shutdown_s_totals() -> None:
    (session,), problems = read(LOGS / "session-state")
    assert problems == [] and session.title == "Add a health check endpoint that reports the cache's size."
    assert [m.usage for m in session.messages if m.role == "assistant"] == [
        Usage(output=61),
        Usage(output=24),
        Usage(input=230, output=38, cache_write=13620, cache_read=27400),  # 41250 prompt tokens, 41020 of the cache's
    ]


if __name__ == "__main__":  # python tests/test_agentlogs_copilot.py: write the sample's state.vscdb
    build_sample(Path(sys.argv[1]) if len(sys.argv) > 1 else LOGS / "workspaceStorage" / WORKSPACE)


# --- keys repeated, a database read alone, a reading that stops ----------------------------------------


def test_a_session_id_two_places_hold_is_keyed_apart(tmp_path: Path) -> None:
    shared = tmp_path / "User" / "globalStorage"
    for folder in ("emptyWindowChatSessions", "transferredChatSessions"):
        (shared / folder).mkdir(parents=True)
        (shared / folder / "abc.json").write_text(json.dumps({"requests": [REQUEST], "customTitle": folder}))
    found, problems = read(tmp_path / "User")
    assert problems == [] and [(session.key, session.title) for session in found] == [
        ("abc", "emptyWindowChatSessions"),
        ("abc@globalStorage/transferredChatSessions/abc.json", "transferredChatSessions"),
    ]
    twice = state_database(tmp_path / "w" / "state.vscdb", [older_session(), older_session(), older_session()])
    for source in (twice, twice.parent):
        found, problems = read(source)
        assert problems == [] and [session.key for session in found] == [f"w/{OLDER}", f"w/{OLDER}#1", f"w/{OLDER}#2"]


def test_a_state_database_read_alone_has_the_project_of_the_workspace_json_beside_it(tmp_path: Path) -> None:
    database = state_database(tmp_path / "workspaceStorage" / "w1" / "state.vscdb", [older_session()])
    (database.parent / "workspace.json").write_text(json.dumps({"folder": "file:///src/weather"}))
    for source in (database.parent, database):
        assert [(session.key, session.project) for session in read(source)[0]] == [(f"w1/{OLDER}", "/src/weather")]


def test_a_log_whose_reading_stops_is_unread_and_not_read_in_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from archivist import agents
    from archivist.agents.copilot import log as copilot_log

    chat(tmp_path, "s.jsonl", json.dumps({"kind": 0, "v": {"requests": [REQUEST]}}) + "\n")
    events = tmp_path / "session-state" / "s1" / "events.jsonl"
    events.parent.mkdir(parents=True)
    line = {"type": "user.message", "timestamp": "2025-11-28T04:00:00Z", "data": {"content": "list it"}}
    events.write_text(json.dumps(line) + "\n")

    def stopping(handle: Any, *args: Any) -> Any:
        yield handle.readline().rstrip(b"\n"), 0
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(copilot_log, "lines", stopping)
    monkeypatch.setattr(agents, "lines", stopping)  # (what copilot_cli reads through: agents.json_lines)
    found, problems = read(tmp_path)
    assert found == [] and problems == [
        "s.jsonl: reading stopped (Input/output error)",
        "s1/events.jsonl: reading stopped (Input/output error)",
    ]
    assert all(isinstance(problem, Unread) for problem in problems)


def cli_events(root: Path, name: str, events: list[dict[str, Any]]) -> None:
    folder = root / "session-state" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "events.jsonl").write_text("\n".join(json.dumps(event) for event in events) + "\n", encoding="utf-8")


def said(when: str, content: str) -> dict[str, Any]:
    return {"type": "user.message", "timestamp": when, "data": {"content": content}}


def answered(when: str, content: str, **data: Any) -> dict[str, Any]:
    return {"type": "assistant.message", "timestamp": when, "data": {"content": content, "toolRequests": [], **data}}


def shutdown(when: str, metrics: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "session.shutdown",
        "timestamp": when,
        "data": {"shutdownType": "routine", "totalPremiumRequests": 2, "modelMetrics": metrics},
    }


def metric(prompt: int, output: int, read: int = 0, written: int = 0) -> dict[str, Any]:
    counted = {"inputTokens": prompt, "outputTokens": output, "cacheReadTokens": read, "cacheWriteTokens": written}
    return {"requests": {"count": 2, "cost": 1}, "usage": counted}


def test_the_cli_s_usage_is_each_run_s_totals_by_model_on_its_last_message_of_that_model(tmp_path: Path) -> None:
    start = {"type": "session.start", "timestamp": "2025-11-28T04:00:00Z", "data": {"selectedModel": "gpt-5"}}
    change = {"type": "session.model_change", "timestamp": "2025-11-28T04:02:00Z", "data": {"newModel": "claude-x"}}
    cli_events(
        tmp_path,
        "s1",
        [
            start,
            said("2025-11-28T04:00:10Z", "list the routes"),
            answered("2025-11-28T04:00:20Z", "three routes", outputTokens=30),
            answered("2025-11-28T04:00:30Z", "and a fourth", outputTokens=10),
            change,
            said("2025-11-28T04:02:10Z", "now test them"),
            answered("2025-11-28T04:02:20Z", "tested"),
            shutdown(
                "2025-11-28T04:03:00Z",
                {
                    "gpt-5": metric(1000, 50, read=600, written=100),  # input counts the cache's tokens too
                    "claude-x": metric(500, 70),
                    "helper-mini": metric(200, 5, read=150),  # a sub-agent's model: no message of its own
                },
            ),
            said("2025-11-29T09:00:00Z", "and the docs"),  # resumed: a new run, a shutdown of its own
            answered("2025-11-29T09:00:10Z", "done", model="claude-x", outputTokens=8),
            shutdown("2025-11-29T09:01:00Z", {"claude-x": metric(300, 20, read=250)}),
        ],
    )
    (session,), _ = read(tmp_path)
    assistants = [message for message in session.messages if message.role == "assistant"]
    assert [(m.text, m.model, m.timestamp, m.usage) for m in assistants] == [
        ("three routes", "gpt-5", "2025-11-28T04:00:20Z", Usage(output=30)),
        ("and a fourth", "gpt-5", "2025-11-28T04:00:30Z", Usage(input=300, output=20, cache_write=100, cache_read=600)),
        ("tested", "claude-x", "2025-11-28T04:02:20Z", Usage(input=500, output=70)),
        ("", "helper-mini", "2025-11-28T04:03:00Z", Usage(input=50, output=5, cache_read=150)),
        ("done", "claude-x", "2025-11-29T09:00:10Z", Usage(input=50, output=20, cache_read=250)),
    ]
    assert session.models == ["gpt-5", "claude-x", "helper-mini"]
    total = sum((m.usage for m in assistants if m.usage), Usage())
    assert (total.input, total.output, total.cache_read, total.cache_write) == (900, 145, 1000, 100)
    assert total.cost is None  # the requests' cost is a premium-request multiplier, never dollars


def test_a_cli_session_still_running_has_its_messages_output_and_bad_metrics_are_no_usage(tmp_path: Path) -> None:
    start = {"type": "session.start", "timestamp": "2025-11-28T04:00:00Z", "data": {"selectedModel": "gpt-5"}}
    cli_events(
        tmp_path,
        "running",
        [start, said("2025-11-28T04:00:10Z", "hi"), answered("2025-11-28T04:00:20Z", "hello", outputTokens=12)],
    )
    bad = {"gpt-5": {"usage": {"inputTokens": "many", "outputTokens": -3}}, "": metric(5, 5), "x": "no metric"}
    cli_events(
        tmp_path,
        "stopped",
        [
            start,
            said("2025-11-28T04:00:10Z", "hi"),
            answered("2025-11-28T04:00:20Z", "hello"),
            shutdown("2025-11-28T04:01:00Z", bad),
        ],
    )
    sessions, _ = read(tmp_path)
    by_key = {session.key: session for session in sessions}
    assert [m.usage for m in by_key["cli/running"].messages] == [None, Usage(output=12)]
    assert [m.usage for m in by_key["cli/stopped"].messages] == [None, None]
    assert by_key["cli/stopped"].problems == []


@pytest.mark.parametrize(
    ("requests", "title"),
    [
        (["/clear", "/init", "fix the flaky test"], "fix the flaky test"),
        (["/model gpt-5", "why is the cache stale?"], "why is the cache stale?"),
        (["/clear", "/init"], "/init: set up the project's instructions file"),
        (["/usage"], "/usage"),
        (["/tmp/x.log is huge\nwhy?"], "/tmp/x.log is huge why?"),  # a path that opens a request is no command
    ],
)
def test_a_cli_session_is_titled_by_its_first_request_never_a_command_alone(
    tmp_path: Path, requests: list[str], title: str
) -> None:
    events = [said(f"2025-11-28T04:00:0{n}Z", text) for n, text in enumerate(requests)]
    cli_events(tmp_path, "s1", [*events, answered("2025-11-28T04:01:00Z", "ok")])
    (session,), _ = read(tmp_path)
    assert session.title == title
