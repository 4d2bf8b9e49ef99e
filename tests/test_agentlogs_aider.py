"""Aider chat histories (``.aider.chat.history.md``) read in place, as aider's writer lays them out."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from archivist.agents import Session, ToolCall, aider

FENCE = "```"

# Two aider runs as aider writes them: a header, the command line and announcements ("> "),
# inputs ("#### ", multi-line ones joined), replies (raw markdown), and aider's output after.
RAW = f"""
# aider chat started at 2025-05-12 14:03:27

> /home/ana/.local/bin/aider --model sonnet
> Aider v0.83.1
> Main model: anthropic/claude-3-7-sonnet-20250219 with diff edit format, infinite output
> Weak model: anthropic/claude-3-5-haiku-20241022
> Git repo: .git with 42 files
> Repo-map: using 4096 tokens, auto refresh

#### /add app.py
> Added app.py to the chat

#### fix the off-by-one in paginate()
#### keep the signature unchanged

I'll fix the loop bound.

app.py
{FENCE}python
<<<<<<< SEARCH
    for i in range(0, n - 1):
=======
    for i in range(0, n):
>>>>>>> REPLACE
{FENCE}

> Tokens: 5.2k sent, 180 received. Cost: $0.02 message, $0.02 session.
> Applied edit to app.py
> Commit 3f2a1bc fix: correct paginate loop bound
>
> pytest -q
> Run shell command? (Y)es/(N)o/(D)on't ask again [Yes]: y
> Running pytest -q
> Add command output to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: y
> Added 3 lines of output to the chat.

#### /run python -m app --check
> Add 0.1k tokens of command output to the chat? (Y)es/(N)o [Yes]: n

#### how do I quote a heading in markdown?

Put it in a code block:

{FENCE}markdown
#### Not a user line
> not aider's output
{FENCE}

That keeps both as text.

> Tokens: 1.1k sent, 40 received.

# aider chat started at 2025-05-13 09:10:02

> aider
> Model: gpt-4 with whole edit format

#### !ls -la
> total 8
drwxr-xr-x  2 ana ana 4096 May 13 09:10 .
-rw-r--r--  1 ana ana   12 May 13 09:10 app.py

#### /read-only docs/spec.md
> Added /home/ana/repo/docs/spec.md to read-only files.

#### /git log --oneline -1
> 3f2a1bc fix: correct paginate loop bound

#### summarise the spec

It describes the pagination API.

# aider chat started at 2025-05-13 09:10:02

#### hello again

Hello!

# aider chat started at 2025-05-14 10:00:00

> aider --help

# aider chat started at 2025-05-15 08:00:00
"""


def hard_breaks(raw: str) -> str:
    """Aider ends every input and output line with a markdown hard break (two spaces); replies are raw."""
    lines, fenced = [], False
    for line in raw.split("\n"):
        if line.startswith(FENCE):
            fenced = not fenced
        quoted = line.startswith(("#### ", "> ")) or line == ">"
        lines.append(line + "  " if quoted and not fenced else line)
    return "\n".join(lines)


HISTORY = hard_breaks(RAW)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / aider.HISTORY_NAME).write_text(HISTORY, encoding="utf-8")
    (folder / "app.py").write_text("print('app')\n", encoding="utf-8")
    return folder


def sessions(path: Path) -> list[Session]:
    return list(aider.read(path))


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(path.relative_to(root)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_kind_name():
    assert aider.KIND == "aider"


def test_one_session_per_header_with_timestamp_keys_and_the_folder_as_project(repo: Path):
    found = sessions(repo)
    assert [s.key for s in found] == ["2025-05-12 14:03:27", "2025-05-13 09:10:02", "2025-05-13 09:10:02#2"]
    assert all(s.agent == "aider" for s in found)
    assert all(s.project == str(repo) for s in found)
    assert all(s.files == [repo / aider.HISTORY_NAME] for s in found)
    assert [s.started for s in found] == ["2025-05-12T14:03:27Z", "2025-05-13T09:10:02Z", "2025-05-13T09:10:02Z"]


def test_the_file_itself_is_a_source_too(repo: Path):
    assert [s.key for s in sessions(repo / aider.HISTORY_NAME)] == [s.key for s in sessions(repo)]


def test_roles_in_order_user_lines_joined_and_tool_output_kept_out_of_the_text(repo: Path):
    first = sessions(repo)[0]
    roles = [m.role for m in first.messages]
    assert roles == ["tool", "user", "tool", "user", "assistant", "tool", "user", "tool", "user", "assistant", "tool"]
    banner = first.messages[0]
    assert banner.text == ""
    assert banner.tool_output.startswith("/home/ana/.local/bin/aider --model sonnet\nAider v0.83.1")
    fix = first.messages[3]
    assert fix.text == "fix the off-by-one in paginate()\nkeep the signature unchanged"
    reply = first.messages[4]
    assert reply.text.startswith("I'll fix the loop bound.\n\napp.py\n```python\n<<<<<<< SEARCH")
    assert reply.text.endswith(">>>>>>> REPLACE\n```")
    assert reply.model == "anthropic/claude-3-7-sonnet-20250219"
    assert first.models == ["anthropic/claude-3-7-sonnet-20250219"]
    assert first.title == "fix the off-by-one in paginate() keep the signature unchanged"


def test_fenced_heading_and_quote_lines_stay_in_the_reply(repo: Path):
    first = sessions(repo)[0]
    reply = first.messages[9]
    assert reply.role == "assistant"
    assert "#### Not a user line\n> not aider's output" in reply.text
    assert reply.text.endswith("That keeps both as text.")
    assert first.messages[10].tool_output == "Tokens: 1.1k sent, 40 received."


def test_files_and_commands_become_tool_calls(repo: Path):
    first, second, _ = sessions(repo)
    added = first.messages[2]
    assert added.tool_calls == [ToolCall(name="add", files=["app.py"])]
    after_edit = first.messages[5]
    assert after_edit.tool_calls == [
        ToolCall(name="edit", files=["app.py"]),
        ToolCall(name="run", commands=["pytest -q"]),
    ]
    assert "Added 3 lines of output to the chat." in after_edit.tool_output  # not a file
    run = first.messages[6]
    assert run.role == "user"
    assert run.tool_calls == [ToolCall(name="run", commands=["python -m app --check"])]

    calls = [(m.role, c) for m in second.messages for c in m.tool_calls]
    assert calls == [
        ("user", ToolCall(name="run", commands=["ls -la"])),
        ("tool", ToolCall(name="read", files=["/home/ana/repo/docs/spec.md"])),
        ("user", ToolCall(name="git", commands=["git log --oneline -1"])),
    ]


def test_a_multi_line_output_continues_without_its_quote_marks(repo: Path):
    second = sessions(repo)[1]
    listing = second.messages[2]
    assert listing.role == "tool"
    assert listing.tool_output.splitlines() == [
        "total 8",
        "drwxr-xr-x  2 ana ana 4096 May 13 09:10 .",
        "-rw-r--r--  1 ana ana   12 May 13 09:10 app.py",
    ]
    assert [m.role for m in second.messages].count("assistant") == 1


def test_older_model_lines_and_titles_that_skip_commands(repo: Path):
    _, second, again = sessions(repo)
    assert second.models == ["gpt-4"]
    assert second.messages[-1].model == "gpt-4"
    assert second.title == "summarise the spec"
    assert again.title == "hello again"
    assert again.models == []


def test_sessions_with_nothing_said_are_not_yielded(repo: Path):
    keys = [s.key for s in sessions(repo)]
    assert "2025-05-14 10:00:00" not in keys  # only aider's banner
    assert "2025-05-15 08:00:00" not in keys  # a header and nothing else


def test_times_are_kept_as_written_and_a_session_ends_where_it_starts_whatever_the_file_s_time(repo: Path):
    """A copied or cloned history has a new modification time: it says nothing of a session."""
    history = repo / aider.HISTORY_NAME
    history.write_text(HISTORY.split("\n# aider chat started at 2025-05-14")[0], encoding="utf-8")
    for stamp in (dt.datetime(2025, 5, 20, 18, 30, 5).timestamp(), dt.datetime(2020, 1, 1).timestamp()):
        os.utime(history, (stamp, stamp))
        first, second, last = sessions(repo)
        assert (first.started, first.last) == ("2025-05-12T14:03:27Z", "2025-05-12T14:03:27Z")
        assert all(session.last == session.started for session in (first, second, last))
        assert all(m.timestamp is None for s in (first, second, last) for m in s.messages)


def test_only_the_lines_aider_marked_as_input_are_the_person_s(tmp_path: Path):
    """Aider ends each line of an input with two spaces; the model's own headings have none."""
    history = tmp_path / aider.HISTORY_NAME
    history.write_text(
        "# aider chat started at 2025-06-02 09:00:00\n\n"
        "#### plan the migration  \n"
        "#### in two steps  \n\n"
        "<thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>\n\nTwo steps: schema, then data.\n\n"
        "</thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b>\n\n"
        "#### Step 1: the schema\n\nAdd the column.\n\n#### Step 2: the data\n\nBackfill it.\n\n"
        "> Tokens: 1.2k sent, 80 received.\n\n"
        "#### thanks  \n",
        encoding="utf-8",
    )
    (session,) = list(aider.read(history))
    assert [(m.role, m.text.split("\n")[0]) for m in session.messages if m.role != "tool"] == [
        ("user", "plan the migration"),
        ("assistant", "#### Step 1: the schema"),
        ("user", "thanks"),
    ]
    reply = session.messages[1]
    assert "#### Step 2: the data" in reply.text and "Backfill it." in reply.text
    assert reply.thinking == "Two steps: schema, then data." and "thinking-content" not in reply.text
    mixed = tmp_path / "mixed.md"
    mixed.write_text(
        "# aider chat started at 2025-06-02 09:00:00\n\n#### a  \n#### b\n#### c  \n\nThe reply.\n", encoding="utf-8"
    )
    (one,) = list(aider.read(mixed))
    assert [(m.role, m.text) for m in one.messages] == [("user", "a\nb\nc"), ("assistant", "The reply.")]
    never_closed = "<thinking-content-1>" * 50_000
    assert aider._thinking(never_closed) == (never_closed, "")


def test_damaged_input_is_read_around_never_fatal(tmp_path: Path):
    history = tmp_path / aider.HISTORY_NAME
    history.write_bytes(
        b"stray text before any header\r\n"
        b"# aider chat started at 2025-06-01 10:00:00\r\n\r\n"
        b"#### caf\xe9 au lait?  \r\n\r\n"
        b"Here:\r\n\r\n```python\r\nprint('never closed')\r\n\r\n"
        b"> Tokens: 1k sent, 10 received.  \r\n"
        b"> Applied edit to cafe.py  \r\n\r\n"
        b"#### thanks  \r\n\r\n"
        b"Done\r\n"
    )
    [session] = sessions(tmp_path)
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "user", "assistant"]
    assert session.messages[0].text == "caf\ufffd au lait?"
    assert session.messages[1].text == "Here:\n\n```python\nprint('never closed')"
    assert session.messages[2].tool_calls == [ToolCall(name="edit", files=["cafe.py"])]
    assert session.messages[4].text == "Done"
    assert "1 lines before the first session header skipped" in session.problems
    assert "a code fence in a reply was never closed" in session.problems


def test_blank_input_and_an_empty_file(tmp_path: Path):
    history = tmp_path / aider.HISTORY_NAME
    history.write_text("# aider chat started at 2025-06-01 10:00:00\n\n#### <blank>  \n\nYes?\n", encoding="utf-8")
    [session] = sessions(tmp_path)
    assert [m.role for m in session.messages] == ["assistant"]
    assert session.title == "aider chat 2025-06-01 10:00:00"
    history.write_text("", encoding="utf-8")
    assert sessions(tmp_path) == []
    assert aider.check(tmp_path) is None


def test_check_says_what_was_expected(tmp_path: Path, repo: Path):
    assert aider.check(repo) is None
    assert aider.check(repo / aider.HISTORY_NAME) is None
    missing = aider.check(tmp_path / "nowhere")
    assert missing is not None and "does not exist" in missing and aider.HISTORY_NAME in missing
    empty = tmp_path / "empty"
    empty.mkdir()
    no_history = aider.check(empty)
    assert no_history is not None and f"has no {aider.HISTORY_NAME}" in no_history
    renamed = tmp_path / "chat.md"
    renamed.write_text("\n# aider chat started at 2025-05-12 14:03:27\n\n#### hi  \n", encoding="utf-8")
    assert aider.check(renamed) is None
    assert [s.key for s in aider.read(renamed)] == ["2025-05-12 14:03:27"]
    other = tmp_path / "notes.md"
    other.write_text("# Notes\n\nnothing from aider\n", encoding="utf-8")
    sentence = aider.check(other)
    assert sentence is not None and "aider chat started at" in sentence and sentence.endswith(".")
    assert aider.check(repo / "app.py") is not None


def test_a_missing_source_reads_as_nothing(tmp_path: Path):
    assert sessions(tmp_path / "nowhere") == []
    assert sessions(tmp_path) == []


def test_reading_is_stable_and_writes_nothing(repo: Path):
    before = snapshot(repo.parent)
    first = sessions(repo)
    second = sessions(repo)
    assert first == second
    assert snapshot(repo.parent) == before
