"""claude.ai data exports read in place: conversations, branches, blocks, the folder and the zip."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from archivist.agents import claude_export
from archivist.agents.exports import EXPECTED, PROBLEMS_PER_FILE
from archivist.agents.json_list import ExportError, Skipped, iter_json_list

ROOT = "00000000-0000-4000-8000-000000000000"


def block(kind: str, **fields: Any) -> dict[str, Any]:
    return {"start_timestamp": None, "stop_timestamp": None, "flags": None, "type": kind, **fields}


def message(
    uuid: str, sender: str, created: str, content: list[dict[str, Any]] | None = None, **more: Any
) -> dict[str, Any]:
    text = "".join(b.get("text", "") for b in content or [] if b["type"] == "text")
    return {
        "uuid": uuid,
        "text": more.pop("text", text),
        "content": content if content is not None else [],
        "sender": sender,
        "created_at": created,
        "updated_at": created,
        "attachments": [],
        "files": [],
        **more,
    }


def conversation(uuid: str, name: str | None, messages: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {
        "uuid": uuid,
        "name": name,
        "summary": "",
        "created_at": "2025-11-17T05:34:19.504762Z",
        "updated_at": "2025-11-17T14:07:49.224930Z",
        "account": {"uuid": "acc-1"},
        "chat_messages": messages,
        **more,
    }


def retry_decorator() -> dict[str, Any]:
    """A conversation with an attachment, thinking, tool use and its results, and an artifact."""
    return conversation(
        "conv-retry",
        "Python retry decorator",
        [
            message(
                "m1",
                "human",
                "2025-11-17T05:34:21.730215Z",
                [block("text", text="Write a retry decorator with exponential backoff", citations=[])],
                attachments=[
                    {
                        "file_name": "notes.txt",
                        "file_size": 20,
                        "file_type": "text/plain",
                        "extracted_content": "jitter please",
                    }
                ],
                files=[{"file_name": "diagram.png"}],
                parent_message_uuid=ROOT,
            ),
            message(
                "m2",
                "assistant",
                "2025-11-17T05:34:22.721191+00:00",
                [
                    block(
                        "thinking",
                        thinking="User wants backoff with jitter.",
                        summaries=[{"summary": "Planning"}],
                        cut_off=False,
                        start_timestamp="2025-11-17T05:34:22.0Z",
                    ),
                    block(
                        "tool_use",
                        name="bash_tool",
                        input={"command": "ls /mnt/user-data", "description": "look around"},
                        message="Listing files",
                    ),
                    block(
                        "tool_result",
                        tool_use_id="toolu_1",
                        name="bash_tool",
                        content=[{"type": "text", "text": "uploads outputs", "uuid": "r1"}],
                        is_error=False,
                        start_timestamp="2025-11-17T05:34:23.5Z",
                    ),
                    block(
                        "tool_use",
                        name="create_file",
                        input={"path": "/mnt/user-data/outputs/retry.py", "file_text": "import time\n"},
                        start_timestamp="2025-11-17T05:34:24Z",
                    ),
                    block(
                        "tool_result",
                        tool_use_id="toolu_2",
                        name="create_file",
                        content=[{"type": "text", "text": "File created successfully", "uuid": "r2"}],
                        is_error=False,
                    ),
                    block("token_budget"),
                    block(
                        "text",
                        text="Here is a decorator with backoff.",
                        citations=[],
                        start_timestamp="2025-11-17T05:34:26Z",
                    ),
                    block(
                        "tool_use",
                        name="artifacts",
                        input={"id": "retry", "command": "create", "title": "retry.py", "content": "def retry(): ..."},
                    ),
                ],
                text="Here is a decorator with backoff. ```Viewing artifacts created via the Analysis Tool```",
                parent_message_uuid="m1",
            ),
        ],
    )


def old_style() -> dict[str, Any]:
    """An older export: plain text only, no content blocks, no parent links, no name."""
    first = {"uuid": "o1", "text": "How do I   undo a git commit?\nKeep the changes.", "sender": "human"}
    first["created_at"] = "2024-03-01T10:00:00Z"
    second = {
        "uuid": "o2",
        "text": "Use git reset --soft HEAD~1.",
        "sender": "assistant",
        "created_at": "2024-03-01T10:00:05",
    }
    return {"uuid": "conv-old", "name": None, "created_at": "2024-03-01T10:00:00Z", "chat_messages": [first, second]}


def write_export(folder: Path, files: dict[str, Any], extra: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, value in files.items():
        (folder / name).write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    for name, text in (extra or {"users.json": "[]", "projects.json": "[]"}).items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def write_zip(path: Path, files: dict[str, Any], prefix: str = "") -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, value in files.items():
            archive.writestr(prefix + name, value if isinstance(value, str) else json.dumps(value))
        archive.writestr(prefix + "users.json", "[]")
    return path


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


def read_all(path: Path) -> tuple[list[claude_export.Session], list[str]]:
    problems: list[str] = []
    return list(claude_export.read(path, problems)), problems


# --- what a conversation becomes


def test_a_conversation_with_tools_thinking_and_attachments(tmp_path: Path) -> None:
    export = write_export(tmp_path / "export", {"conversations.json": [retry_decorator()]})
    (session,), problems = read_all(export)
    assert problems == []
    assert session.key == "conv-retry"
    assert session.agent == "claude-export" == claude_export.KIND
    assert session.title == "Python retry decorator"
    assert session.project is None and session.models == [] and session.branch is None
    assert session.files == [export / "conversations.json"]
    roles = [m.role for m in session.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    user, think, listing, create, created, answer = session.messages
    assert user.text == (
        "Write a retry decorator with exponential backoff\n\n[attachment: notes.txt]\njitter please\n\n[file: diagram.png]"
    )
    assert user.timestamp == "2025-11-17T05:34:21Z"
    assert think.thinking == "User wants backoff with jitter."
    assert think.text == ""
    assert think.timestamp == "2025-11-17T05:34:22Z"
    assert [(c.name, c.files, c.commands) for c in think.tool_calls] == [("bash_tool", [], ["ls /mnt/user-data"])]
    assert listing.tool_output == "uploads outputs" and listing.text == ""
    assert listing.timestamp == "2025-11-17T05:34:23Z"
    assert create.timestamp == "2025-11-17T05:34:24Z"
    assert [(c.name, c.files) for c in create.tool_calls] == [("create_file", ["/mnt/user-data/outputs/retry.py"])]
    assert create.text == "[created file: /mnt/user-data/outputs/retry.py]\nimport time"
    assert created.tool_output == "File created successfully"
    # The placeholder of the plain text is not read: the blocks are.
    assert answer.text == "Here is a decorator with backoff.\n\n[artifact: retry.py]\ndef retry(): ..."
    assert [c.name for c in answer.tool_calls] == ["artifacts"]
    assert answer.tool_calls[0].commands == []  # an artifact's "command" is no shell command
    # each call keeps its input, less what the answer's text shows and the command it ran
    assert think.tool_calls[0].input == '{"description":"look around"}'
    assert create.tool_calls[0].input == '{"path":"/mnt/user-data/outputs/retry.py"}'
    assert answer.tool_calls[0].input == '{"id":"retry","command":"create","title":"retry.py"}'
    assert session.started == "2025-11-17T05:34:21Z"
    assert session.last == "2025-11-17T05:34:26Z"


def test_an_old_export_without_blocks_or_links(tmp_path: Path) -> None:
    export = write_export(tmp_path / "export", {"conversations.json": [old_style()]})
    (session,), problems = read_all(export)
    assert problems == []
    assert session.title == "How do I undo a git commit? Keep the changes."
    assert [(m.role, m.text, m.timestamp) for m in session.messages] == [
        ("user", "How do I   undo a git commit?\nKeep the changes.", "2024-03-01T10:00:00Z"),
        ("assistant", "Use git reset --soft HEAD~1.", "2024-03-01T10:00:05Z"),  # a naive time is UTC
    ]


def test_a_long_first_message_is_shortened_as_title(tmp_path: Path) -> None:
    long = "word " * 40
    convo = conversation("c", "", [message("a", "human", "2025-01-01T00:00:00Z", [block("text", text=long)])])
    (session,), _ = read_all(write_export(tmp_path / "e", {"conversations.json": [convo]}))
    assert session.title.endswith("…") and len(session.title) == 80


def test_only_the_current_branch_is_read(tmp_path: Path) -> None:
    """A regenerated answer and an edited question leave every branch in chat_messages."""
    t = "2025-06-01T10:00:{:02d}Z".format
    messages = [
        message("q1", "human", t(0), [block("text", text="First question")], parent_message_uuid=ROOT),
        message(
            "a1", "assistant", t(1), [block("text", text="First answer, regenerated away")], parent_message_uuid="q1"
        ),
        message("a1b", "assistant", t(2), [block("text", text="First answer, kept")], parent_message_uuid="q1"),
        message(
            "q2", "human", t(3), [block("text", text="Second question, before the edit")], parent_message_uuid="a1b"
        ),
        message("r2", "assistant", t(4), [block("text", text="Reply to the old question")], parent_message_uuid="q2"),
        message("q2b", "human", t(5), [block("text", text="Second question, edited")], parent_message_uuid="a1b"),
        message("r2b", "assistant", t(6), [block("text", text="Reply to the edit")], parent_message_uuid="q2b"),
    ]
    (session,), problems = read_all(
        write_export(tmp_path / "e", {"conversations.json": [conversation("b", "B", messages)]})
    )
    assert problems == [] and session.problems == []
    assert [m.text for m in session.messages] == [
        "First question",
        "First answer, kept",
        "Second question, edited",
        "Reply to the edit",
    ]


def test_a_broken_parent_chain_falls_back_to_the_list_order(tmp_path: Path) -> None:
    messages = [
        message("q1", "human", "2025-06-01T10:00:00Z", [block("text", text="one")], parent_message_uuid=ROOT),
        message("a1", "assistant", "2025-06-01T10:00:01Z", [block("text", text="two")], parent_message_uuid="gone"),
    ]
    (session,), _ = read_all(write_export(tmp_path / "e", {"conversations.json": [conversation("c", "C", messages)]}))
    assert [m.text for m in session.messages] == ["one", "two"]
    assert any("parent is missing" in p for p in session.problems)


def test_unknown_blocks_senders_and_bad_messages_are_counted_not_fatal(tmp_path: Path) -> None:
    messages: list[Any] = [
        message("q", "human", "2025-01-01T00:00:00Z", [block("text", text="hello")]),
        "not a message",
        message("x", "system", "2025-01-01T00:00:01Z", [block("text", text="who?")]),
        message(
            "a",
            "assistant",
            "2025-01-01T00:00:02Z",
            [block("text", text="hi"), block("mystery"), block("mystery"), block("voice_note", text="said aloud")],
        ),
        message("e", "assistant", "2025-01-01T00:00:03Z", []),  # empty: not a message
    ]
    (session,), problems = read_all(
        write_export(tmp_path / "e", {"conversations.json": [conversation("c", "C", messages)]})
    )
    assert problems == []
    assert [m.text for m in session.messages] == ["hello", "hi\n\nsaid aloud"]
    assert session.problems == [
        "message 2 is not an object: skipped",
        "message 3 has an unknown sender 'system': skipped",
        "2 content block(s) of unknown type 'mystery' skipped",
    ]


def test_tool_errors_and_images_in_results(tmp_path: Path) -> None:
    content = [
        block("tool_use", name="web_fetch", input={"url": "https://example.com"}),
        block("tool_result", name="web_fetch", content=[{"type": "text", "text": "timeout"}], is_error=True),
        block("tool_use", name="view", input={"path": "/mnt/a.png"}),
        block("tool_result", name="view", content=[{"type": "image"}]),
        block("text", text="Done."),
    ]
    messages = [
        message("q", "human", "2025-01-01T00:00:00Z", [block("text", text="go")]),
        message("a", "assistant", "2025-01-01T00:00:01Z", content),
    ]
    (session,), _ = read_all(write_export(tmp_path / "e", {"conversations.json": [conversation("c", "C", messages)]}))
    assert [(m.role, m.text, m.tool_output) for m in session.messages] == [
        ("user", "go", ""),
        ("assistant", "", ""),
        ("tool", "", "[error] timeout"),
        ("assistant", "", ""),
        ("tool", "", "[image]"),
        ("assistant", "Done.", ""),
    ]
    assert [c.files for m in session.messages for c in m.tool_calls] == [[], ["/mnt/a.png"]]
    assert [c.input for m in session.messages for c in m.tool_calls] == [
        '{"url":"https://example.com"}',
        '{"path":"/mnt/a.png"}',
    ]


def test_a_web_searchs_pages_are_kept_by_title_address_and_quote(tmp_path: Path) -> None:
    page = {"type": "knowledge", "metadata": {"type": "webpage_metadata", "site_domain": "rfc-editor.org"}}
    results = [
        {
            **page,
            "title": "RFC 7517: JSON Web Key (JWK)",
            "url": "https://www.rfc-editor.org/rfc/rfc7517",
            "text": "A JWK Set",
        },
        {**page, "title": "Untitled quote", "text": ["not", "a", "text"], "url": 7},
        {**page, "title": None, "url": "https://openid.net/specs", "text": "The signer"},
        {"type": "text", "text": "plain"},
    ]
    content = [
        block("tool_use", name="web_search", input={"query": "JWKS rotation"}),
        block("tool_result", name="web_search", content=results),
    ]
    messages = [
        message("q", "human", "2025-01-01T00:00:00Z", [block("text", text="search")]),
        message("a", "assistant", "2025-01-01T00:00:01Z", content),
    ]
    (session,), _ = read_all(write_export(tmp_path / "e", {"conversations.json": [conversation("c", "C", messages)]}))
    (result,) = [m for m in session.messages if m.role == "tool"]
    assert result.tool_output.splitlines() == [
        "RFC 7517: JSON Web Key (JWK)",
        "https://www.rfc-editor.org/rfc/rfc7517",
        "A JWK Set",
        "Untitled quote",
        "https://openid.net/specs",
        "The signer",
        "plain",
    ]


def test_a_tool_input_that_is_no_object_is_kept_as_it_is(tmp_path: Path) -> None:
    content = [
        block("tool_use", name="bash_tool", input="ls -la"),
        block("tool_use", name="create_file", input=["/mnt/a.py", 3]),
        block("tool_use", name="create_file", input={"path": "/mnt/b.py", "file_text": 7}),
    ]
    messages = [
        message("q", "human", "2025-01-01T00:00:00Z", [block("text", text="go")]),
        message("a", "assistant", "2025-01-01T00:00:01Z", content),
    ]
    (session,), _ = read_all(write_export(tmp_path / "e", {"conversations.json": [conversation("c", "C", messages)]}))
    calls = [call for m in session.messages for call in m.tool_calls]
    assert [(call.input, call.commands, call.edits) for call in calls] == [
        ("ls -la", [], []),
        ('["/mnt/a.py",3]', [], []),
        ('{"path":"/mnt/b.py","file_text":7}', [], []),
    ]


# --- the export: folder, zip, split files, damage


def test_split_files_are_read_in_their_numbered_order(tmp_path: Path) -> None:
    def one(n: int) -> dict[str, Any]:
        return conversation(
            f"c{n}", f"Chat {n}", [message(f"m{n}", "human", "2025-01-01T00:00:00Z", [block("text", text="hi")])]
        )

    export = write_export(
        tmp_path / "e",
        {
            "conversations-2.json": [one(2)],
            "conversations-10.json": [one(10), one(11)],
            "conversations-1.json": [one(1)],
        },
    )
    sessions, problems = read_all(export)
    assert problems == []
    assert [s.key for s in sessions] == ["c1", "c2", "c10", "c11"]
    assert sessions[2].files == [export / "conversations-10.json"]
    assert [s.key for s in claude_export.read(export)] == ["c1", "c2", "c10", "c11"]  # the same order every time


@pytest.mark.parametrize("prefix", ["", "data-2025-11-17/"])
def test_the_zip_reads_like_the_folder(tmp_path: Path, prefix: str) -> None:
    files = {"conversations.json": [retry_decorator(), old_style()]}
    folder_sessions, _ = read_all(write_export(tmp_path / "folder", files))
    archive = write_zip(tmp_path / "data-2025-11-17-batch-0000.zip", files, prefix)
    before = snapshot(tmp_path)
    assert claude_export.check(archive) is None
    zip_sessions, problems = read_all(archive)
    assert problems == []
    assert snapshot(tmp_path) == before  # nothing extracted, nothing written
    assert [s.files for s in zip_sessions] == [[archive], [archive]]
    for from_zip, from_folder in zip(zip_sessions, folder_sessions):
        from_zip.files = from_folder.files
        assert from_zip == from_folder


def test_reading_and_checking_write_nothing(tmp_path: Path) -> None:
    export = write_export(tmp_path / "e", {"conversations.json": [retry_decorator()], "conversations-1.json": "[{"})
    before = snapshot(tmp_path)
    assert claude_export.check(export) is None
    read_all(export)
    assert snapshot(tmp_path) == before


def test_a_malformed_conversation_is_skipped_and_counted(tmp_path: Path) -> None:
    export = write_export(
        tmp_path / "e",
        {
            "conversations.json": [
                "a string",
                {"uuid": "no-messages", "name": "x", "chat_messages": {"not": "a list"}},
                conversation("empty", "Nothing said", []),
                retry_decorator(),
            ]
        },
    )
    sessions, problems = read_all(export)
    assert [s.key for s in sessions] == ["conv-retry"]  # the empty conversation is not a session, nor a problem
    assert problems == [
        "conversations.json: conversation 1 skipped: it is a string, not a conversation",
        "conversations.json: conversation 2 skipped: it has no chat_messages list",
    ]


def test_many_skipped_conversations_are_summed_up(tmp_path: Path) -> None:
    export = write_export(tmp_path / "e", {"conversations.json": [1] * 25 + [retry_decorator()]})
    sessions, problems = read_all(export)
    assert len(sessions) == 1
    assert len(problems) == PROBLEMS_PER_FILE + 1
    assert problems[-1] == "conversations.json: 15 more conversations skipped"


def test_a_repeated_key_is_read_once(tmp_path: Path) -> None:
    export = write_export(
        tmp_path / "e", {"conversations-0.json": [retry_decorator()], "conversations-1.json": [retry_decorator()]}
    )
    sessions, problems = read_all(export)
    assert len(sessions) == 1
    assert problems == ["conversations-1.json: conversation 1 skipped: its key conv-retry came before"]


def test_a_damaged_file_is_read_up_to_the_damage(tmp_path: Path) -> None:
    good = json.dumps([retry_decorator(), old_style()])
    cut = good[: good.index('"conv-old"') + 30]  # a download cut short inside the second conversation
    garbled = good.replace('"conv-old"', '"conv-old" oops', 1)
    export = write_export(
        tmp_path / "e",
        {
            "conversations-1.json": cut,
            "conversations-2.json": garbled,
            "conversations-3.json": "not json",
            "conversations-4.json": "",
        },
    )
    sessions, problems = read_all(export)
    assert [s.key for s in sessions] == ["conv-retry"]  # the first file's; the second's first is a repeat
    assert problems[0] == "conversations-1.json ends inside conversation 2 (the file is cut short): it is skipped"
    assert problems[1] == "conversations-2.json: conversation 1 skipped: its key conv-retry came before"
    assert problems[2].startswith("conversations-2.json has invalid JSON in conversation 2 at character ")
    assert problems[2].endswith("(Expecting ',' delimiter): it and the rest of the file are skipped")
    assert problems[3:] == ["conversations-3.json is not a JSON list", "conversations-4.json is empty"]


def test_a_path_that_is_no_export_reads_nothing(tmp_path: Path) -> None:
    sessions, problems = read_all(tmp_path / "missing")
    assert sessions == [] and problems == [f"{tmp_path / 'missing'} does not exist"]


def test_bytes_that_are_not_utf8_are_replaced(tmp_path: Path) -> None:
    data = json.dumps([old_style()]).replace("Keep the changes", "Keep the \\u00e9 changes").encode()
    data = "\ufeff".encode() + data.replace(b"Use git", b"Use \xff git")
    export = tmp_path / "e"
    export.mkdir()
    (export / "conversations.json").write_bytes(data)
    (session,), problems = read_all(export)
    assert problems == []
    assert session.messages[0].text.endswith("Keep the é changes.")
    assert session.messages[1].text == "Use \ufffd git reset --soft HEAD~1."


# --- check


def chatgpt_conversation() -> dict[str, Any]:
    return {
        "title": "Regex",
        "create_time": 1700000000.0,
        "current_node": "n1",
        "conversation_id": "g1",
        "mapping": {"n1": {"id": "n1", "parent": None, "children": [], "message": None}},
    }


def test_check_accepts_a_folder_and_a_zip(tmp_path: Path) -> None:
    files = {"conversations.json": [retry_decorator()]}
    assert claude_export.check(write_export(tmp_path / "e", files)) is None
    assert claude_export.check(str(write_zip(tmp_path / "e.zip", files))) is None
    # A first item that is no conversation does not hide the ones after it.
    assert claude_export.check(write_export(tmp_path / "f", {"conversations.json": [None, retry_decorator()]})) is None
    # An export with no conversation yet is still an export.
    assert claude_export.check(write_export(tmp_path / "g", {"conversations.json": []})) is None


def test_check_refuses_a_chatgpt_export_and_says_so(tmp_path: Path) -> None:
    export = write_export(tmp_path / "gpt", {"conversations.json": [chatgpt_conversation()]}, {"chat.html": ""})
    reason = claude_export.check(export)
    assert reason == (
        f"{export} looks like a ChatGPT export (its conversations are message trees under mapping), "
        f"not a claude.ai export: add it as chatgpt-export={export}."
    )
    empty = write_export(tmp_path / "gpt-empty", {"conversations.json": []}, {"chat.html": "", "user.json": "{}"})
    assert "looks like a ChatGPT export" in (claude_export.check(empty) or "")


def test_check_says_what_was_expected(tmp_path: Path) -> None:
    expected = EXPECTED["claude-export"]
    missing = tmp_path / "missing"
    assert claude_export.check(missing) == f"{missing} does not exist: expected {expected}."

    text = tmp_path / "notes.txt"
    text.write_text("hello")
    assert claude_export.check(text) == f"{text} is neither a folder nor a .zip: expected {expected}."

    empty = tmp_path / "empty"
    empty.mkdir()
    assert claude_export.check(empty) == f"{empty} holds no conversations.json: expected {expected}."

    export = write_export(tmp_path / "e", {"conversations.json": [retry_decorator()]})
    reason = claude_export.check(export / "conversations.json") or ""
    assert reason.startswith(f"{export / 'conversations.json'} is a conversations file, not an export: give the folder")

    not_list = write_export(tmp_path / "obj", {"conversations.json": {"conversations": []}})
    assert claude_export.check(not_list) == (
        f"{not_list}: conversations.json is not a JSON list (it is a JSON object): expected {expected}."
    )
    other = write_export(tmp_path / "other", {"conversations.json": [{"messages": []}]})
    assert claude_export.check(other) == (
        f"{other}: the items of conversations.json are not conversations of a known shape: expected {expected}."
    )
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    assert (claude_export.check(broken) or "").endswith(f": expected {expected}.")
    bare_zip = tmp_path / "bare.zip"
    with zipfile.ZipFile(bare_zip, "w") as archive:
        archive.writestr("users.json", "[]")
    assert (
        claude_export.check(bare_zip) == f"{bare_zip} is a zip that holds no conversations.json: expected {expected}."
    )


# --- the list parser


NASTY = [
    {
        "s": 'quote " backslash \\ slash / tab \t nl \n',
        "u": "é ☃ 𝄞 \ud83d\ude00",
        "n": [0, -1.5e-3, 12345678901234567890, True, None],
    },
    [],
    {},
    "plain",
    3.25,
    {"deep": [[[[{"x": "]}],["}]]]], "long": "y" * 5000},
]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 4096])
def test_the_list_is_parsed_as_json_loads_parses_it(chunk: int) -> None:
    for text in (json.dumps(NASTY), json.dumps(NASTY, indent=2), json.dumps(NASTY, ensure_ascii=False)):
        assert list(iter_json_list(io.StringIO(text), chunk)) == json.loads(text)
    assert list(iter_json_list(io.StringIO(" [ ] "), chunk)) == []
    assert list(iter_json_list(io.StringIO("[1, 22, 333]"), chunk)) == [1, 22, 333]


@pytest.mark.parametrize("chunk", [1, 5, 4096])
def test_the_list_parser_reads_up_to_damage(chunk: int) -> None:
    def items(text: str) -> tuple[list[Any], str]:
        got: list[Any] = []
        with pytest.raises(ExportError) as error:
            for item in iter_json_list(io.StringIO(text), chunk):
                got.append(item)
        return got, str(error.value)

    assert items('[{"a": 1}, {"b": "cut') == (
        [{"a": 1}],
        "ends inside conversation 2 (the file is cut short): it is skipped",
    )
    assert items('[{"a": 1}, {"b": 2}') == (
        [{"a": 1}, {"b": 2}],
        "ends after conversation 2, before the list is closed (the file is cut short)",
    )
    got, why = items('[{"a": 1}, {"b": 2,, "c": 3}, {"d": 4}]')
    assert got == [{"a": 1}] and why.startswith("has invalid JSON in conversation 2 at character 19 ")
    got, why = items('[{"a": 1} {"b": 2}]')
    assert got == [{"a": 1}] and why.startswith("has '{' after conversation 1 at character 10")
    assert items('[{"a": 1},]')[0] == [{"a": 1}]
    assert items('{"a": 1}') == ([], "is not a JSON list (it is a JSON object)")
    assert items("   ") == ([], "is empty")


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 4096])
def test_an_item_too_large_or_too_deep_is_skipped_and_the_items_after_it_are_read(chunk: int) -> None:
    long_text = 'escaped \\" quote, backslash \\\\ and "\\\\\\"' * 20  # escapes that chunks cut anywhere
    deep = "[" * 5000 + "]" * 5000
    within = '{"b": [' + "[" * 10 + "]" * 10 + "]}"  # 12 levels
    items = [
        {"a": 1},
        {"long": long_text},
        json.dumps("s" * 300),
        deep,
        "1" + "0" * 300,
        within,
        {"text": "[" * 150},  # brackets inside a string are no depth
        "1" + "0" * 5000,  # more digits than Python converts
        {"z": None},
    ]
    text = "[" + ", ".join(item if isinstance(item, str) else json.dumps(item) for item in items) + "]"
    too_large = Skipped(
        "over 200 bytes, more than one conversation read whole may have; "
        "raise it with ARCHIVIST_EXPORT_MAX_CONVERSATION_BYTES=1MB"
    )
    too_deep = Skipped("JSON nested deeper than 100 levels")  # the reason names the budget readers use
    expected = [{"a": 1}, too_large, too_large, too_deep, too_large, json.loads(within), {"text": "[" * 150}]
    assert list(iter_json_list(io.StringIO(text), chunk, limit=200, depth=20)) == [*expected, too_large, {"z": None}]
    number = Skipped("it holds a number too long to read")
    assert list(iter_json_list(io.StringIO(text), chunk, limit=10_000, depth=20))[-2:] == [number, {"z": None}]


def test_nesting_is_read_up_to_its_budget_and_skipped_past_it() -> None:
    within, past = "[" * 100 + "]" * 100, "[" * 101 + "]" * 101
    for chunk in (1, 4096):
        got = list(iter_json_list(io.StringIO(f"[{within}, {past}, 1]"), chunk))
        assert got[0] == json.loads(within)
        assert got[1:] == [Skipped("JSON nested deeper than 100 levels"), 1]


def test_an_item_skipped_and_cut_short_is_told_as_the_file_cut_short() -> None:
    for text in ('[{"a": 1}, {"b": "' + "x" * 500, '[{"a": 1}, ' + "[" * 5000):
        got: list[Any] = []
        with pytest.raises(ExportError, match=r"^ends inside conversation 2 \(the file is cut short\): it is skipped$"):
            for item in iter_json_list(io.StringIO(text), 16, limit=100):
                got.append(item)
        assert got == [{"a": 1}]
