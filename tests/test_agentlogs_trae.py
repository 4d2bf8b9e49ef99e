"""Trae's state databases: what is read, what is skipped and why, hostile values, and databases held
or damaged.

The sample (``sample-agent-logs/trae/User``) is what ``build_sample`` writes, in the shape
kenn-io/agentsview reads (``internal/parser/trae_provider.go``); run this file to write it again:
``.venv/bin/python tests/test_agentlogs_trae.py``.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from archivist.agents import Unavailable, Unread, registry, trae

SAMPLE = Path(__file__).resolve().parent.parent / "sample-agent-logs" / "trae" / "User"
WORKSPACE = "5d1c7a9e3b2f4e6a8c0d1e2f3a4b5c6d"
PROJECT = "/home/dev/projects/weather-cli"
ASKED = "6f2e9a41-3c7b-4d58-9e1a-2b4c6d8e0f13"  # the shared database's session
PLANNED = "9b3d5e7f-1a2c-4e6b-8d0f-3a5c7e9b1d24"  # the workspace's session, an agent's plan as its answer


def database(path: Path, items: dict[str, Any]) -> Path:
    """A state.vscdb with VS Code's ItemTable, each value JSON text."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA page_size = 1024")
    connection.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    connection.executemany(
        "INSERT INTO ItemTable VALUES (?, ?)",
        [(key, value if isinstance(value, str | bytes) else json.dumps(value)) for key, value in items.items()],
    )
    connection.commit()
    connection.execute("VACUUM")
    connection.close()
    return path


def asked() -> dict[str, Any]:
    return {
        "sessionId": ASKED,
        "createdAt": 1762427100000,  # 2025-11-06T11:05:00Z
        "updatedAt": 1762427160000,
        "model": "doubao-seed-1.6",
        "messages": [
            {
                "role": "user",
                "content": "How do I read a TOML file in Python 3.11?",
                "timestamp": 1762427100000,
                "turnIndex": 0,
            },
            {
                "role": "assistant",
                "content": "Use the standard library's tomllib: open the file in binary mode and call tomllib.load.",
                "timestamp": 1762427112000,
                "turnIndex": 1,
            },
        ],
    }


def planned() -> dict[str, Any]:
    return {
        "sessionId": PLANNED,
        "createdAt": 1763560800000,  # 2025-11-19T14:00:00Z
        "updatedAt": 1763561100000,
        "model": "claude-sonnet-4",
        "messages": [
            {
                "role": "user",
                "content": "Add a --units flag to the forecast command",
                "timestamp": 1763560800000,
                "turnIndex": 0,
            },
            {
                "role": "assistant",
                "content": "",
                "agentTaskContent": {
                    "guideline": {
                        "planItems": [
                            {"content": "Add a units option to the forecast command in weather_cli/cli.py"},
                            {"content": "Convert the temperatures in weather_cli/format.py"},
                        ]
                    }
                },
                "timestamp": 1763560830000,
                "model": "claude-sonnet-4",
                "turnIndex": 1,
            },
            {"role": "user", "content": "Also cover it in the tests", "timestamp": 1763561000000, "turnIndex": 2},
            {
                "role": "assistant",
                "content": "",
                "agentTaskContent": "Added test_units_flag to tests/test_cli.py; both cases pass.",
                "timestamp": 1763561100000,
                "turnIndex": 3,
            },
        ],
    }


def build_sample(user: Path) -> Path:
    """Trae's User folder: the shared database with one session, one workspace with another."""
    database(user / "globalStorage" / "state.vscdb", {trae.STORAGE: {"list": [asked()], "currentSessionId": ASKED}})
    window = user / "workspaceStorage" / WORKSPACE
    database(window / "state.vscdb", {trae.STORAGE: {"list": [planned()], "currentSessionId": PLANNED}})
    (window / "workspace.json").write_text(json.dumps({"folder": f"file://{PROJECT}"}), encoding="utf-8")
    return user


def read(path: Path) -> tuple[list[Any], list[str]]:
    problems: list[str] = []
    return list(trae.read(path, problems)), problems


@pytest.fixture
def user(tmp_path: Path) -> Path:
    return build_sample(tmp_path / "User")


def rows(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as connection:
        return connection.execute("SELECT key, value FROM ItemTable ORDER BY key").fetchall()


# --- what is read ---------------------------------------------------------------------------------------


def test_the_sample_is_what_the_script_writes(tmp_path: Path) -> None:
    built = build_sample(tmp_path / "User")
    for name in ("globalStorage/state.vscdb", f"workspaceStorage/{WORKSPACE}/state.vscdb"):
        assert rows(SAMPLE / name) == rows(built / name)
        assert (SAMPLE / name).stat().st_size < 20_000
    assert registry.kinds(registry.manager(entry_points=False))["trae"].sample == "trae/User"


def test_each_session_s_messages_models_times_title_and_project() -> None:
    found, problems = read(SAMPLE)
    assert problems == []
    assert [s.key for s in found] == [ASKED, PLANNED]
    first, second = found
    assert (first.agent, first.project, first.title) == ("trae", None, "How do I read a TOML file in Python 3.11?")
    assert [(m.role, m.timestamp, m.model) for m in first.messages] == [
        ("user", "2025-11-06T11:05:00Z", None),
        ("assistant", "2025-11-06T11:05:12Z", "doubao-seed-1.6"),
    ]
    assert first.models == ["doubao-seed-1.6"]
    assert (first.started, first.last) == ("2025-11-06T11:05:00Z", "2025-11-06T11:06:00Z")
    assert second.project == PROJECT
    assert [m.text for m in second.messages] == [
        "Add a --units flag to the forecast command",
        "Add a units option to the forecast command in weather_cli/cli.py\n"
        "Convert the temperatures in weather_cli/format.py",
        "Also cover it in the tests",
        "Added test_units_flag to tests/test_cli.py; both cases pass.",
    ]
    assert second.models == ["claude-sonnet-4"]
    assert all(m.usage is None and not m.tool_calls for m in second.messages)
    assert second.files == [SAMPLE / "workspaceStorage" / WORKSPACE / "state.vscdb"]


def test_each_part_of_the_user_folder_is_a_source(user: Path) -> None:
    window = user / "workspaceStorage" / WORKSPACE
    for source, keys in [
        (user, [ASKED, PLANNED]),
        (user / "globalStorage", [ASKED]),
        (user / "globalStorage" / "state.vscdb", [ASKED]),
        (user / "workspaceStorage", [PLANNED]),
        (window, [PLANNED]),
        (window / "state.vscdb", [PLANNED]),
    ]:
        assert trae.check(source) is None, source
        found, problems = read(source)
        assert [s.key for s in found] == keys and problems == [], source
        assert all(s.project == PROJECT for s in found if s.key == PLANNED)
    assert set(trae.log_files(user)) == {
        user / "globalStorage" / "state.vscdb",
        window / "state.vscdb",
        window / "workspace.json",
    }


def test_a_session_listed_twice_is_read_once_from_the_first_database(user: Path) -> None:
    database(user / "globalStorage" / "state.vscdb", {trae.STORAGE: {"list": [asked(), planned()]}})
    found, _ = read(user)
    assert [(s.key, s.project) for s in found] == [(ASKED, None), (PLANNED, None)]


def test_a_given_title_and_iso_times_are_read(tmp_path: Path) -> None:
    session = asked() | {"title": "TOML in Python", "createdAt": "2025-10-02T08:00:00.000Z"}
    session["messages"][0]["timestamp"] = "2025-10-02T08:00:01Z"
    found, _ = read(database(tmp_path / "state.vscdb", {trae.STORAGE: {"list": [session]}}))
    assert found[0].title == "TOML in Python"
    assert found[0].started == "2025-10-02T08:00:00Z"
    assert found[0].messages[0].timestamp == "2025-10-02T08:00:01Z"


# --- what is skipped ------------------------------------------------------------------------------------


def test_messages_and_entries_of_no_known_shape_are_skipped_and_told(tmp_path: Path) -> None:
    session = asked()
    session["messages"] += [
        {"role": "system", "content": "You are Trae"},
        {"role": "assistant", "content": "", "agentTaskContent": {"guideline": {}}},
        "not a message",
    ]
    listed = [session, {"messages": [{"role": "user", "content": "no id"}]}, {"sessionId": "empty", "messages": []}]
    found, problems = read(database(tmp_path / "state.vscdb", {trae.STORAGE: {"list": listed}}))
    assert [s.key for s in found] == [ASKED]
    assert len(found[0].messages) == 2
    assert found[0].problems == ["3 messages skipped: 1 role system, 1 no text, 1 not an object"]
    assert problems == [Unread("1 listed session skipped: 1 no sessionId")]


def test_a_database_without_the_sessions_key_holds_no_session(tmp_path: Path) -> None:
    path = database(tmp_path / "state.vscdb", {"memento/unrelated-chat-storage": {"list": [asked()]}})
    assert trae.check(path) is None
    assert read(path) == ([], [])


def test_values_of_the_wrong_type_everywhere_never_raise(tmp_path: Path) -> None:
    odd: list[Any] = [None, 1, "x", [], {}, {"list": 3}, {"list": [None, 5, {"sessionId": 7}]}]
    for number, value in enumerate(odd):
        read(database(tmp_path / f"{number}.vscdb", {trae.STORAGE: value}))
    session = asked()
    session["messages"] = [
        {"role": 5, "content": None},
        {"role": "assistant", "content": 3, "agentTaskContent": [1], "timestamp": {}, "model": []},
        {"role": "assistant", "agentTaskContent": {"guideline": {"planItems": [None, {"content": 4}]}}},
    ]
    session |= {"model": 9, "createdAt": "never", "title": ["x"]}
    found, _ = read(database(tmp_path / "odd.vscdb", {trae.STORAGE: {"list": [session]}}))
    assert found == []
    found, problems = read(database(tmp_path / "text.vscdb", {trae.STORAGE: "{not json"}))
    assert found == [] and len(problems) == 1 and "its sessions' list not read" in problems[0]


# --- databases held, damaged, no regular file ------------------------------------------------------------


def test_a_database_another_program_holds_locked_is_unavailable(user: Path) -> None:
    holder = sqlite3.connect(user / "globalStorage" / "state.vscdb", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO ItemTable VALUES ('x', 'y')")
    try:
        with pytest.raises(Unavailable):
            read(user)
    finally:
        holder.close()
    assert len(read(user)[0]) == 2


def test_a_damaged_database_is_told_and_the_others_read(user: Path) -> None:
    shared = user / "globalStorage" / "state.vscdb"
    shared.write_bytes(b"not a database at all")
    found, problems = read(user)
    assert [s.key for s in found] == [PLANNED]
    assert problems == [Unread("globalStorage/state.vscdb cannot be read (file is not a database)")]
    assert "is not a SQLite database" in (trae.check(shared) or "")


def test_reading_leaves_the_sample_as_it_was(tmp_path: Path) -> None:
    copy = shutil.copytree(SAMPLE, tmp_path / "User")
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    read(copy)
    assert {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before


def test_a_source_that_is_not_trae_s_says_what_was_expected(tmp_path: Path) -> None:
    assert "holds no state.vscdb" in (trae.check(tmp_path) or "")
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    assert "expected Trae's User folder" in (trae.check(tmp_path / "notes.txt") or "")
    assert "does not exist" in (trae.check(tmp_path / "missing") or "") or trae.check(tmp_path / "missing")


if __name__ == "__main__":
    shutil.rmtree(SAMPLE, ignore_errors=True)
    build_sample(SAMPLE)
    print(f"wrote {SAMPLE}", file=sys.stderr)
