"""ChatGPT data exports read in place: the current branch of each conversation, its content types, folder and zip."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from archivist.agents import Session, chatgpt_export
from archivist.agents.exports import EXPECTED

T0 = 1700000000.0  # 2023-11-14T22:13:20Z


def msg(
    role: str,
    content: dict[str, Any],
    at: float | None = None,
    name: str | None = None,
    recipient: str = "all",
    channel: str | None = None,
    weight: float = 1.0,
    **metadata: Any,
) -> dict[str, Any]:
    return {
        "id": "x",
        "author": {"role": role, "name": name, "metadata": {}},
        "create_time": at,
        "update_time": None,
        "content": content,
        "status": "finished_successfully",
        "end_turn": None,
        "weight": weight,
        "metadata": metadata,
        "recipient": recipient,
        "channel": channel,
    }


def text(*parts: Any) -> dict[str, Any]:
    return {"content_type": "text", "parts": list(parts)}


def tree(*nodes: tuple[str, str | None, dict[str, Any] | None]) -> dict[str, Any]:
    """A mapping from (id, parent, message) triples; children follow from the parents."""
    mapping: dict[str, Any] = {
        node_id: {"id": node_id, "message": message, "parent": parent, "children": []}
        for node_id, parent, message in nodes
    }
    for node_id, parent, _ in nodes:
        if parent is not None:
            mapping[parent]["children"].append(node_id)
    return mapping


def conversation(
    key: str, title: str | None, mapping: dict[str, Any], current: str | None, **more: Any
) -> dict[str, Any]:
    found: dict[str, Any] = {
        "title": title,
        "create_time": T0,
        "update_time": T0 + 100.5,
        "mapping": mapping,
        "conversation_id": key,
        "id": key,
        "default_model_slug": "gpt-4o",
        "is_archived": False,
        "safe_urls": [],
        **more,
    }
    if current is not None:
        found["current_node"] = current
    return found


def edited() -> dict[str, Any]:
    """A hidden system prompt, custom instructions, then a question edited once: two branches."""
    mapping = tree(
        ("client-created-root", None, None),
        ("sys", "client-created-root", msg("system", text(""), weight=0.0, is_visually_hidden_from_conversation=True)),
        (
            "ctx",
            "sys",
            msg(
                "user",
                {"content_type": "user_editable_context", "user_profile": "I am Ann", "user_instructions": "Be brief"},
                is_visually_hidden_from_conversation=True,
            ),
        ),
        ("u1", "ctx", msg("user", text("Give me a regex for ISO dates"), T0 + 1)),
        ("a1", "u1", msg("assistant", text("`\\d{4}-\\d{2}-\\d{2}`"), T0 + 2, model_slug="gpt-4o")),
        ("u2", "a1", msg("user", text("And with times? (first wording)"), T0 + 3)),
        ("a2", "u2", msg("assistant", text("Answer to the first wording"), T0 + 4, model_slug="gpt-4o")),
        ("u2b", "a1", msg("user", text("And with times and zones?"), T0 + 5)),
        ("recap", "u2b", msg("assistant", {"content_type": "reasoning_recap", "content": "Thought for 2s"}, T0 + 6)),
        (
            "think",
            "recap",
            msg(
                "assistant",
                {"content_type": "thoughts", "thoughts": [{"summary": "Zones", "content": "Allow Z or an offset."}]},
                T0 + 6.5,
                model_slug="o3",
            ),
        ),
        ("a2b", "think", msg("assistant", text("Add `(Z|[+-]\\d{2}:\\d{2})`"), T0 + 7, model_slug="o3")),
    )
    return conversation("67a678d3-edited", "Regex for ISO dates", mapping, "a2b")


def python_run() -> dict[str, Any]:
    """Code run by the assistant, its output, an image and a quote from the web."""
    mapping = tree(
        ("root", None, None),
        (
            "u",
            "root",
            msg(
                "user",
                {
                    "content_type": "multimodal_text",
                    "parts": [
                        {"content_type": "image_asset_pointer", "asset_pointer": "file-service://f1"},
                        "Plot this",
                    ],
                },
                T0 + 10,
            ),
        ),
        (
            "code",
            "u",
            msg(
                "assistant",
                {"content_type": "code", "language": "python", "text": "import pandas as pd\npd.read_csv('data.csv')"},
                T0 + 11,
                recipient="python",
                model_slug="gpt-4o",
            ),
        ),
        (
            "out",
            "code",
            msg("tool", {"content_type": "execution_output", "text": "   a  b\n0  1  2"}, T0 + 12, name="python"),
        ),
        (
            "web",
            "out",
            msg(
                "tool",
                {
                    "content_type": "tether_quote",
                    "url": "https://example.com/p",
                    "domain": "example.com",
                    "title": "Plots",
                    "text": "Use matplotlib.",
                },
                T0 + 13,
                name="browser",
            ),
        ),
        (
            "img",
            "web",
            msg(
                "tool",
                {"content_type": "multimodal_text", "parts": [{"content_type": "image_asset_pointer"}]},
                T0 + 14,
                name="python",
            ),
        ),
        (
            "ana",
            "img",
            msg("assistant", text("The user wants a chart."), T0 + 15, channel="analysis", model_slug="gpt-5"),
        ),
        ("done", "ana", msg("assistant", text("Here is the plot."), T0 + 16, default_model_slug="gpt-5")),
    )
    return conversation("conv-python", None, mapping, "done", conversation_template_id="g-p-67ab12cd")


def write_export(folder: Path, files: dict[str, Any], extra: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, value in files.items():
        (folder / name).write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    for name, content in (extra or {"chat.html": "<html></html>", "user.json": "{}"}).items():
        (folder / name).write_text(content, encoding="utf-8")
    return folder


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    return {
        str(path.relative_to(root)): (
            path.stat().st_size,
            path.stat().st_mtime_ns,
            hashlib.sha256(path.read_bytes()).hexdigest(),
        )
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def read_all(path: Path) -> tuple[list[Session], list[str]]:
    problems: list[str] = []
    return list(chatgpt_export.read(path, problems)), problems


# --- what a conversation becomes


def test_the_current_branch_then_the_branch_an_edit_left(tmp_path: Path) -> None:
    (session,), problems = read_all(write_export(tmp_path / "e", {"conversations.json": [edited()]}))
    assert problems == [] and session.problems == []
    assert session.key == "67a678d3-edited"
    assert session.agent == "chatgpt-export" == chatgpt_export.KIND
    assert session.title == "Regex for ISO dates"
    assert [(m.role, m.text) for m in session.messages] == [
        ("system", "I am Ann\n\nBe brief"),  # the custom instructions the model was given
        ("user", "Give me a regex for ISO dates"),
        ("assistant", "`\\d{4}-\\d{2}-\\d{2}`"),
        ("user", "And with times and zones?"),  # the edit, on the current branch
        ("assistant", ""),
        ("assistant", "Add `(Z|[+-]\\d{2}:\\d{2})`"),
        (
            "system",
            "[another branch, not the current one: the next 2 message(s) followed message 3 before an edit"
            " or a regeneration there]",
        ),
        ("user", "And with times? (first wording)"),
        ("assistant", "Answer to the first wording"),
    ]
    assert session.messages[4].thinking == "Zones\nAllow Z or an offset."
    assert [m.model for m in session.messages] == [None, None, "gpt-4o", None, "o3", "o3", None, None, "gpt-4o"]
    assert session.models == ["gpt-4o", "o3"]
    assert session.messages[1].timestamp == "2023-11-14T22:13:21Z"
    assert session.started == "2023-11-14T22:13:21Z"
    assert session.last == "2023-11-14T22:13:27Z"
    assert session.project is None and session.branch is None
    assert session.files == [tmp_path / "e" / "conversations.json"]


def test_tools_code_images_quotes_and_analysis(tmp_path: Path) -> None:
    (session,), problems = read_all(write_export(tmp_path / "e", {"conversations.json": [python_run()]}))
    assert problems == [] and session.problems == []
    assert session.title == "[image] Plot this"  # no title: the first user message
    assert session.project == "g-p-67ab12cd"
    assert [(m.role, m.text, m.tool_output) for m in session.messages] == [
        ("user", "[image]\n\nPlot this", ""),
        ("assistant", "```python\nimport pandas as pd\npd.read_csv('data.csv')\n```", ""),
        ("tool", "", "   a  b\n0  1  2"),
        ("tool", "", "Plots\nhttps://example.com/p\n\nUse matplotlib."),
        ("tool", "", "[image]"),
        ("assistant", "", ""),
        ("assistant", "Here is the plot.", ""),
    ]
    assert [[c.name for c in m.tool_calls] for m in session.messages] == [[], ["python"], [], [], [], [], []]
    assert session.messages[5].thinking == "The user wants a chart."
    assert session.models == ["gpt-4o", "gpt-5"]  # the last message only says its default model


def test_the_conversation_default_model_when_messages_name_none(tmp_path: Path) -> None:
    mapping = tree(("u", None, msg("user", text("hi"), T0)), ("a", "u", msg("assistant", text("hello"), T0 + 1)))
    convo = conversation("c", "Hi", mapping, "a", default_model_slug="gpt-5")
    (session,), _ = read_all(write_export(tmp_path / "e", {"conversations.json": [convo]}))
    assert session.models == ["gpt-5"]
    assert [m.model for m in session.messages] == [None, None]


def test_a_missing_current_node_follows_the_latest_leaf(tmp_path: Path) -> None:
    convo = edited()
    del convo["current_node"]
    (session,), _ = read_all(write_export(tmp_path / "e", {"conversations.json": [convo]}))
    assert session.messages[5].text == "Add `(Z|[+-]\\d{2}:\\d{2})`"
    assert session.messages[-1].text == "Answer to the first wording"
    assert session.problems == ["its current_node is missing: the branch written last is read"]
    convo["current_node"] = "nowhere"
    convo["conversation_id"] = convo["id"] = "other"
    (session,), _ = read_all(write_export(tmp_path / "f", {"conversations.json": [convo]}))
    assert session.messages[3].text == "And with times and zones?"
    assert session.problems == ["its current_node is 'nowhere', not in the tree: the branch written last is read"]


def test_a_branch_off_a_branch_comes_after_it_and_odd_children_are_skipped(tmp_path: Path) -> None:
    mapping = tree(
        ("u1", None, msg("user", text("Name a colour"), T0)),
        ("a1", "u1", msg("assistant", text("Blue"), T0 + 1)),
        ("a1b", "u1", msg("assistant", text("Red"), T0 + 2)),
        ("u2", "a1b", msg("user", text("Another"), T0 + 3)),
        ("a2", "u2", msg("assistant", text("Green"), T0 + 4)),
        ("a2b", "u2", msg("assistant", text("Teal"), T0 + 5)),
        ("a3", "u1", msg("assistant", text("Gold"), T0 + 6)),
    )
    mapping["a1b"]["children"] += [7, "nowhere", None, "u1"]
    mapping["a2"]["children"] = {"not": "a list"}
    mapping["a3"]["children"] = "a2"
    (session,), _ = read_all(
        write_export(tmp_path / "e", {"conversations.json": [conversation("c", "C", mapping, "a3")]})
    )
    marker = "[another branch, not the current one: the next {} message(s) followed message {} before an edit or a regeneration there]"
    assert [m.text for m in session.messages] == [
        "Name a colour",
        "Gold",
        marker.format(1, 1),
        "Blue",
        marker.format(3, 1),
        "Red",
        "Another",
        "Teal",  # the child written last
        marker.format(1, 7),
        "Green",
    ]
    assert (session.started, session.last) == ("2023-11-14T22:13:20Z", "2023-11-14T22:13:26Z")
    assert session.problems == []


def test_custom_instructions_as_typed_where_the_context_holds_none(tmp_path: Path) -> None:
    typed = {"about_user_message": "I teach maths", "about_model_message": ["not", "text"]}
    context = {"content_type": "user_editable_context", "user_profile": 3, "user_instructions": ""}
    mapping = tree(
        ("ctx", None, msg("user", context, user_context_message_data=typed, is_visually_hidden_from_conversation=True)),
        ("empty", "ctx", msg("user", {"content_type": "user_editable_context"}, T0)),
        ("u", "empty", msg("user", text("hi"), T0 + 1)),
    )
    (session,), _ = read_all(
        write_export(tmp_path / "e", {"conversations.json": [conversation("c", "C", mapping, "u")]})
    )
    assert [(m.role, m.text) for m in session.messages] == [("system", "I teach maths"), ("user", "hi")]


def test_odd_nodes_are_skipped_and_counted(tmp_path: Path) -> None:
    mapping = tree(
        ("u", None, msg("user", text("hi", ""), T0)),
        ("blank", "u", msg("assistant", text(""), T0 + 1)),
        ("widget", "blank", msg("assistant", {"content_type": "super_widget", "data": 1}, T0 + 2)),
        ("critic", "widget", msg("critic", text("meh"), T0 + 3)),
        ("sys", "critic", msg("system", text("Visible system note"), T0 + 4)),
        ("err", "sys", msg("tool", {"content_type": "system_error", "name": "Timeout", "text": "too slow"}, T0 + 5)),
        ("new", "err", msg("assistant", {"content_type": "future_text", "parts": ["from a newer export"]}, T0 + 6)),
    )
    mapping["loop"] = "not a node"
    (session,), problems = read_all(
        write_export(tmp_path / "e", {"conversations.json": [conversation("c", "C", mapping, "new")]})
    )
    assert problems == []
    assert [(m.role, m.text, m.tool_output) for m in session.messages] == [
        ("user", "hi", ""),
        ("system", "Visible system note", ""),
        ("tool", "", "Timeout: too slow"),
        ("assistant", "from a newer export", ""),
    ]
    assert session.problems == [
        "a message by 'critic' (not user, assistant, tool or system) skipped",
        "1 message(s) of unknown content type 'super_widget' skipped",
    ]


def test_a_conversation_with_nothing_visible_is_not_a_session(tmp_path: Path) -> None:
    hidden = tree(
        ("root", None, None),
        ("sys", "root", msg("system", text("You are ChatGPT"), weight=0.0)),
    )
    export = write_export(
        tmp_path / "e", {"conversations.json": [conversation("empty", "Empty", hidden, "sys"), edited()]}
    )
    sessions, problems = read_all(export)
    assert [s.key for s in sessions] == ["67a678d3-edited"] and problems == []


def test_a_parent_loop_is_read_up_to_the_loop(tmp_path: Path) -> None:
    mapping = tree(("a", None, msg("user", text("one"), T0)), ("b", "a", msg("assistant", text("two"), T0 + 1)))
    mapping["a"]["parent"] = "b"
    (session,), _ = read_all(
        write_export(tmp_path / "e", {"conversations.json": [conversation("c", "C", mapping, "b")]})
    )
    assert [m.text for m in session.messages] == ["one", "two"]
    assert session.problems == ["the tree's parent links form a loop: the branch is read up to it"]


def test_the_key_falls_back_to_id(tmp_path: Path) -> None:
    convo = edited()
    del convo["conversation_id"]
    convo["id"] = "only-id"
    (session,), _ = read_all(write_export(tmp_path / "e", {"conversations.json": [convo]}))
    assert session.key == "only-id"


# --- the export: folder, zip, split files, damage


def test_split_files_zip_and_folder_give_the_same_sessions(tmp_path: Path) -> None:
    files = {"conversations-001.json": [python_run()], "conversations-000.json": [edited()]}
    folder = write_export(tmp_path / "folder", files)
    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        for name, value in files.items():
            zipped.writestr(name, json.dumps(value))
        zipped.writestr("chat.html", "<html></html>")
        zipped.writestr("file-abc-photo.jpg", b"\xff\xd8")
    before = snapshot(tmp_path)
    assert chatgpt_export.check(folder) is None and chatgpt_export.check(archive) is None
    from_folder, problems_folder = read_all(folder)
    from_zip, problems_zip = read_all(archive)
    assert snapshot(tmp_path) == before  # nothing written, the zip not extracted
    assert problems_folder == problems_zip == []
    assert [s.key for s in from_folder] == ["67a678d3-edited", "conv-python"]  # the files' order
    assert [s.files for s in from_folder] == [[folder / "conversations-000.json"], [folder / "conversations-001.json"]]
    assert [s.files for s in from_zip] == [[archive], [archive]]
    for zipped_session, folder_session in zip(from_zip, from_folder):
        zipped_session.files = folder_session.files
        assert zipped_session == folder_session
    assert [s.key for s in chatgpt_export.read(folder)] == ["67a678d3-edited", "conv-python"]  # stable


def test_malformed_conversations_and_files_are_skipped(tmp_path: Path) -> None:
    good = json.dumps([edited(), python_run()])
    export = write_export(
        tmp_path / "e",
        {
            "conversations.json": [{"title": "no tree", "mapping": None}, ["a", "list"], edited()],
            "conversations-2.json": good[: good.index('"conv-python"') + 10],  # cut inside the second
        },
    )
    before = snapshot(tmp_path)
    sessions, problems = read_all(export)
    assert snapshot(tmp_path) == before
    assert [s.key for s in sessions] == ["67a678d3-edited"]  # from conversations-2.json, read first
    assert problems == [
        "conversations-2.json ends inside conversation 2 (the file is cut short): it is skipped",
        "conversations.json: conversation 1 skipped: it has no mapping (its message tree)",
        "conversations.json: conversation 2 skipped: it is a list, not a conversation",
        "conversations.json: conversation 3 skipped: its key 67a678d3-edited came before",
    ]
    assert sessions[0].files == [export / "conversations-2.json"]


# --- check


def test_check_says_what_was_expected(tmp_path: Path) -> None:
    expected = EXPECTED["chatgpt-export"]
    missing = tmp_path / "missing.zip"
    assert chatgpt_export.check(missing) == f"{missing} does not exist: expected {expected}."
    empty = tmp_path / "empty"
    empty.mkdir()
    assert chatgpt_export.check(empty) == f"{empty} holds no conversations.json: expected {expected}."
    not_zip = tmp_path / "export.zip"
    not_zip.write_text("just text")
    assert chatgpt_export.check(not_zip) == f"{not_zip} is neither a folder nor a .zip: expected {expected}."
    assert chatgpt_export.check(write_export(tmp_path / "none", {"conversations.json": []})) is None


@pytest.mark.parametrize("zipped", [False, True])
def test_check_refuses_a_claude_export_and_says_so(tmp_path: Path, zipped: bool) -> None:
    claude = [{"uuid": "c", "name": "N", "chat_messages": [{"sender": "human", "text": "hi"}]}]
    path = write_export(
        tmp_path / "claude", {"conversations.json": claude}, {"users.json": "[]", "projects.json": "[]"}
    )
    if zipped:
        path = tmp_path / "claude.zip"
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("conversations.json", json.dumps(claude))
    assert chatgpt_export.check(path) == (
        f"{path} looks like a claude.ai export (its conversations have chat_messages), "
        f"not a ChatGPT export: add it as claude-export={path}."
    )
    # Read anyway, a claude.ai export gives no ChatGPT conversation, and says why.
    sessions, problems = read_all(path)
    assert sessions == [] and problems == [
        "conversations.json: conversation 1 skipped: it has no mapping (its message tree)"
    ]
