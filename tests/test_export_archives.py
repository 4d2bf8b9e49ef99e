"""Hostile exports: zips read within limits, members named safely, one bad conversation skipped, no link out opened.

Each export is a real zip (or folder) built here, read by the real readers, most of them
through ``archivist index WORKSPACE --source KIND=PATH`` as a user runs it. Bombs are built
cheaply: one deflate block of a megabyte, flushed so that it stands alone, repeated.
"""

from __future__ import annotations

import base64
import io
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from click.testing import CliRunner

from archivist.agents import LINK_OUT, TOO_DEEP, Unread, archives, chatgpt_export, claude_export
from archivist.cli import cli
from archivist.workspace import archive_path

MB = 1024**2
GB = 1024**3
KEPT = "read in part: what the archive holds of the part not read is kept"  # (store: after an Unread problem)
KINDS = ("claude-export", "chatgpt-export")
READERS = {"claude-export": claude_export, "chatgpt-export": chatgpt_export}
MARKERS = {"claude-export": {"users.json": "[]"}, "chatgpt-export": {"chat.html": "<html></html>"}}
DEEP = "[" * 100_000 + "]" * 100_000


# --- conversations and exports ----------------------------------------------------------------


def claude(key: str, text: str) -> dict[str, Any]:
    message = {"uuid": f"{key}-1", "sender": "human", "text": text, "created_at": "2025-01-01T10:00:00Z"}
    return {"uuid": key, "name": f"Chat {key}", "created_at": "2025-01-01T10:00:00Z", "chat_messages": [message]}


def chatgpt(key: str, text: str) -> dict[str, Any]:
    message = {
        "id": "m",
        "author": {"role": "user"},
        "create_time": 1700000000.0,
        "content": {"content_type": "text", "parts": [text]},
    }
    mapping = {
        "root": {"id": "root", "message": None, "parent": None, "children": ["m"]},
        "m": {"id": "m", "message": message, "parent": "root", "children": []},
    }
    return {"title": f"Chat {key}", "mapping": mapping, "conversation_id": key, "current_node": "m"}


CONVERSATION = {"claude-export": claude, "chatgpt-export": chatgpt}


def conversations_json(*items: dict[str, Any] | str) -> str:
    """A conversations file of these conversations; a string item is raw JSON text, put in as it is."""
    return "[" + ", ".join(item if isinstance(item, str) else json.dumps(item) for item in items) + "]"


def with_field(conversation: dict[str, Any], raw: str) -> str:
    """A conversation's JSON with one more field whose value is the raw JSON text ``raw``."""
    return json.dumps(conversation)[:-1] + f', "extra": {raw}}}'


def incompressible(size: int) -> str:
    """Text that deflate cannot shrink much (random bytes in base64): a zip of it is no bomb."""
    return base64.b64encode(random.Random(size).randbytes(size * 3 // 4)).decode()


def write_zip(path: Path, members: list[tuple[str | zipfile.ZipInfo, str | bytes]], **options: Any) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a repeated name: a test means it
        with zipfile.ZipFile(path, "w", compression=options.pop("compression", zipfile.ZIP_DEFLATED)) as archive:
            for name, data in members:
                archive.writestr(name, data, **options)
    return path


# Where each field is in a member's central directory entry and in its local header.
_CENTRAL = {"flags": (8, "<H"), "method": (10, "<H"), "crc": (16, "<L"), "compressed": (20, "<L"), "size": (24, "<L")}
_LOCAL = {"flags": (6, "<H"), "method": (8, "<H"), "crc": (14, "<L"), "compressed": (18, "<L"), "size": (22, "<L")}


def patch_member(path: Path, name: str, central_only: bool = False, **fields: int) -> None:
    """Rewrite fields of the last member called ``name``, in its directory entry (and its local header)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = [info for info in archive.infolist() if info.orig_filename == name][-1]
        record = archive.start_dir
    while struct.unpack_from("<L", data, record + 42)[0] != info.header_offset:
        name_size, extra_size, comment_size = struct.unpack_from("<3H", data, record + 28)
        record += 46 + name_size + extra_size + comment_size
    for key, value in fields.items():
        struct.pack_into(_CENTRAL[key][1], data, record + _CENTRAL[key][0], value)
        if not central_only:
            struct.pack_into(_LOCAL[key][1], data, info.header_offset + _LOCAL[key][0], value)
    path.write_bytes(data)


def bomb(path: Path, pieces: list[tuple[bytes, int]], extra: dict[str, str] | None = None) -> Path:
    """A zip whose conversations.json is each piece repeated so many times, deflated at deflate's best.

    Each piece is compressed once, with a full flush after it so that its block stands alone,
    and its block repeated: gigabytes of data in a second. The member is written stored, then
    its headers say deflated, with the true size and checksum.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream: list[bytes] = []
    crc = size = 0
    for data, times in pieces:
        stream.append((compressor.compress(data) + compressor.flush(zlib.Z_FULL_FLUSH)) * times)
        for _ in range(times):
            crc = zlib.crc32(data, crc)
        size += len(data) * times
    stream.append(compressor.flush())
    write_zip(path, [("conversations.json", b"".join(stream)), *(extra or {}).items()], compression=zipfile.ZIP_STORED)
    patch_member(path, "conversations.json", method=zipfile.ZIP_DEFLATED, crc=crc, size=size)
    return path


@pytest.fixture(scope="module")
def whitespace_bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 GB of white space in a 3 MB zip, beside the files that mark either kind of export."""
    folder = tmp_path_factory.mktemp("bomb")
    extra = {**MARKERS["claude-export"], **MARKERS["chatgpt-export"]}
    return bomb(folder / "export.zip", [(b"[", 1), (b" " * MB, 3 * 1024), (b"]", 1)], extra)


# --- the CLI and the archive ------------------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def index(workspace: Path, kind: str, source: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["index", str(workspace), "--source", f"{kind}={source}"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output  # no crash
    return result.exit_code, result.output


def stored(workspace: Path) -> list[str]:
    """The titles of the conversations in the archive."""
    db = sqlite_utils.Database(archive_path(workspace))
    return sorted(row[0] for row in db.execute("SELECT title FROM documents WHERE source LIKE 'log:%'"))


def problems(workspace: Path) -> list[str]:
    db = sqlite_utils.Database(archive_path(workspace))
    return [row[0] for row in db.execute("SELECT reason FROM index_problems")]


def read(kind: str, path: Path) -> tuple[list[str], list[str]]:
    told: list[str] = []
    return [session.key for session in READERS[kind].read(path, told)], told


# --- defect 1: member names -------------------------------------------------------------------


def test_a_zip_whose_only_conversations_member_is_absolute_is_refused_in_a_sentence_not_a_crash(
    tmp_path: Path, workspace: Path
) -> None:
    export = write_zip(
        tmp_path / "export.zip",
        [("/conversations.json", conversations_json(claude("abs", "hi"))), ("users.json", "[]")],
    )
    exit_code, output = index(workspace, "claude-export", export)
    assert exit_code == 1
    assert "INVALID_SOURCE" in output and "KeyError" not in output
    assert "holds no conversations.json it may read (/conversations.json: not read: its name is absolute" in output


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("/conversations.json", "its name is absolute"),
        ("../conversations.json", "its name climbs out of the zip's folder (..)"),
        ("data/../../conversations.json", "its name climbs out of the zip's folder (..)"),
        ("data\\conversations.json", "its name holds a backslash"),
        ("C:conversations.json", "its name starts with a drive"),
        ("./conversations.json", "its name holds an empty or . folder"),
        ("conversations.json\x00.png", "its name holds a control character (a NUL, a new line)"),
        ("conversations\n.json", "its name holds a control character (a NUL, a new line)"),
    ],
)
def test_a_member_with_an_unsafe_name_is_not_read_and_is_told_while_the_rest_is_read(
    tmp_path: Path, workspace: Path, name: str, why: str
) -> None:
    written = name.replace("\x00", "\x01")  # zipfile cuts a name at a NUL: it is put in the bytes afterwards
    export = write_zip(
        tmp_path / "export.zip",
        [
            (written, conversations_json(claude("unsafe", "zanzibar"))),
            ("conversations-1.json", conversations_json(claude("safe", "hello"))),
            ("users.json", "[]"),
        ],
    )
    export.write_bytes(export.read_bytes().replace(written.encode(), name.encode()))
    exit_code, output = index(workspace, "claude-export", export)
    assert exit_code == 0, output
    assert stored(workspace) == ["Chat safe"]
    shown = name if name.isprintable() else repr(name)
    assert f"{shown}: not read: {why}" in " ".join(problems(workspace))


def test_a_symlink_member_is_never_followed(tmp_path: Path, workspace: Path) -> None:
    link = zipfile.ZipInfo("conversations.json")
    link.create_system = 3  # unix, whose mode bits say what the member is
    link.external_attr = (0o120777 << 16) | 0x20  # a symbolic link ...
    export = write_zip(
        tmp_path / "export.zip",
        [
            (link, "/etc/passwd"),  # ... to this
            ("conversations-1.json", conversations_json(claude("kept", "hello"))),
            ("users.json", "[]"),
        ],
    )
    exit_code, output = index(workspace, "claude-export", export)
    assert exit_code == 0, output
    assert stored(workspace) == ["Chat kept"]
    assert "conversations.json: not read: it is a symbolic link, which is not followed" in problems(workspace)


def test_of_two_members_of_one_name_the_last_is_read_and_the_other_is_told(tmp_path: Path, workspace: Path) -> None:
    export = write_zip(
        tmp_path / "export.zip",
        [
            ("conversations.json", conversations_json(claude("first-copy", "old"))),
            ("conversations.json", conversations_json(claude("last-copy", "new"))),
            ("users.json", "[]"),
        ],
    )
    exit_code, output = index(workspace, "claude-export", export)
    assert exit_code == 0, output
    assert stored(workspace) == ["Chat last-copy"]
    assert problems(workspace) == [
        "conversations.json: not read: another member of the same name comes after it in the zip, and that one is read",
        KEPT,
    ]
    link = zipfile.ZipInfo("conversations.json")
    link.external_attr = 0o120777 << 16
    later_refused = write_zip(
        tmp_path / "other.zip",
        [("conversations.json", conversations_json(claude("only-copy", "hi"))), (link, "/etc")],
    )
    assert read("claude-export", later_refused) == (
        ["only-copy"],
        ["conversations.json: not read: it is a symbolic link, which is not followed"],
    )


def test_an_encrypted_member_is_refused_in_a_sentence(tmp_path: Path, workspace: Path) -> None:
    export = write_zip(
        tmp_path / "export.zip",
        [("conversations.json", conversations_json(claude("secret", "hi"))), ("users.json", "[]")],
    )
    patch_member(export, "conversations.json", flags=0x1)
    exit_code, output = index(workspace, "claude-export", export)
    assert exit_code == 1
    assert "conversations.json: not read: it is encrypted: unzip it with its password" in output
    assert not archive_path(workspace).exists()


def test_a_member_compressed_in_a_way_not_read_is_refused_in_a_sentence(tmp_path: Path) -> None:
    bzip2 = zipfile.ZipInfo("conversations.json")
    bzip2.compress_type = zipfile.ZIP_BZIP2
    export = write_zip(
        tmp_path / "export.zip",
        [
            (bzip2, conversations_json(claude("bz", "hi"))),
            ("conversations-1.json", conversations_json(claude("kept", "hi"))),
        ],
    )
    assert claude_export.check(export) is None
    keys, told = read("claude-export", export)
    assert keys == ["kept"]
    assert told == [
        "conversations.json: not read: it is compressed with bzip2, which is not read: zip it again with the usual "
        "deflate compression"
    ]


# --- defect 2: bombs and limits ---------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_the_3_gb_whitespace_bomb_is_refused_within_2_seconds_naming_the_limit_and_its_setting(
    whitespace_bomb: Path, workspace: Path, kind: str
) -> None:
    with zipfile.ZipFile(whitespace_bomb) as archive:
        assert archive.getinfo("conversations.json").file_size == 3 * GB + 2  # a real zip, as zipfile reads it
    started = time.monotonic()
    exit_code, output = index(workspace, kind, whitespace_bomb)
    assert time.monotonic() - started < 2
    assert exit_code == 1 and "INVALID_SOURCE" in output
    assert "it would inflate 1,010 times (3.1 GB from 3.1 MB), more than the 100 times a member of a zip may" in output
    assert "raise it with ARCHIVIST_UNZIP_MAX_RATIO=" in output
    started = time.monotonic()
    keys, told = read(kind, whitespace_bomb)  # read anyway (a source added before): told, not read
    assert time.monotonic() - started < 2
    assert keys == [] and "ARCHIVIST_UNZIP_MAX_RATIO" in told[0]
    assert isinstance(told[0], Unread)  # not read: the archive keeps what it holds of the export


def test_a_bomb_whose_header_hides_its_ratio_is_refused_by_the_bytes_it_gives(
    whitespace_bomb: Path, tmp_path: Path
) -> None:
    forged = tmp_path / "forged.zip"
    forged.write_bytes(whitespace_bomb.read_bytes())
    patch_member(forged, "conversations.json", central_only=True, compressed=(3 * GB) // 10)  # "10 times"
    started = time.monotonic()
    keys, told = read("claude-export", forged)
    assert time.monotonic() - started < 2
    assert keys == []
    (problem,) = told
    assert problem.startswith("conversations.json not read past ")
    assert "more than the 100 times a member of a zip may, whatever its header says" in problem
    assert "ARCHIVIST_UNZIP_MAX_RATIO=" in problem


def test_a_member_that_gives_more_than_its_header_says_is_refused(whitespace_bomb: Path, tmp_path: Path) -> None:
    """A declared size smaller than the real data: refused as soon as the data passes it, not read on."""
    small = write_zip(
        tmp_path / "small.zip",
        [("conversations.json", conversations_json(claude("a", "hello"), claude("b", "bye")))],
    )
    for original, declared, shown in (
        (small, 100, "100 bytes"),
        (whitespace_bomb, 100, "100 bytes"),
        (whitespace_bomb, 5 * MB, "5 MB"),
    ):
        forged = tmp_path / "forged.zip"
        forged.write_bytes(original.read_bytes())
        patch_member(forged, "conversations.json", size=declared)
        started = time.monotonic()
        keys, told = read("claude-export", forged)
        assert time.monotonic() - started < 2
        assert keys == []
        assert told == [
            f"conversations.json is damaged or forged: it inflates to more than the {shown} its header says"
        ]


def test_a_small_bomb_is_refused_by_its_ratio_and_read_once_the_setting_allows_it(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = conversations_json(claude("padded", "hello"))
    export = write_zip(tmp_path / "export.zip", [("conversations.json", text[:-1] + " " * 8 * MB + "]")])
    exit_code, output = index(workspace, "claude-export", export)
    assert exit_code == 1 and "ARCHIVIST_UNZIP_MAX_RATIO" in output
    monkeypatch.setenv("ARCHIVIST_UNZIP_MAX_RATIO", "5000")
    exit_code, output = index(workspace, "claude-export", export)
    assert exit_code == 0, output
    assert stored(workspace) == ["Chat padded"]


def test_the_bytes_inflated_from_one_zip_are_limited_by_their_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARCHIVIST_UNZIP_MAX_BYTES", "1MB")
    files = {f"conversations-{n}.json": conversations_json(claude(f"c{n}", incompressible(MB // 3))) for n in range(3)}
    export = write_zip(tmp_path / "export.zip", list(files.items()))
    keys, told = read("claude-export", export)
    assert keys == ["c0", "c1"]  # read up to the limit
    assert told == [
        "conversations-2.json not read past 1 MB: it inflates to 1.1 MB or more, more than the 1 MB one compressed "
        "input may give in all; raise it with ARCHIVIST_UNZIP_MAX_BYTES=2MB"
    ]


def test_the_time_one_zip_takes_to_read_is_limited_by_its_setting(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = write_zip(tmp_path / "export.zip", [("conversations.json", conversations_json(claude("c", "hi")))])
    monkeypatch.setenv("ARCHIVIST_UNZIP_MAX_SECONDS", "1e-9")
    exit_code, output = index(workspace, "claude-export", export)
    assert exit_code == 1
    assert "reading took more than the 1e-09 s one compressed input may take" in output
    assert "raise it with ARCHIVIST_UNZIP_MAX_SECONDS=60" in output


def test_the_time_the_caller_takes_with_what_was_read_is_not_counted() -> None:
    now = [0.0]
    budget = archives.Budget(archives.Limits(max_seconds=10), clock=lambda: now[0])
    with budget.paused():
        now[0] += 100  # storing a conversation, say
    budget.spend(1)
    now[0] += 11
    with pytest.raises(archives.LimitError, match="ARCHIVIST_UNZIP_MAX_SECONDS"):
        budget.spend(1)


def test_a_zip_listing_more_than_its_directory_may_hold_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    members: list[tuple[str | zipfile.ZipInfo, str | bytes]] = [(f"image-{n:04d}.png", b"") for n in range(100)]
    export = write_zip(tmp_path / "export.zip", [("conversations.json", "[]"), *members])
    assert claude_export.check(export) is None
    monkeypatch.setenv("ARCHIVIST_UNZIP_MAX_DIRECTORY_BYTES", "4KB")
    assert claude_export.check(export) == (
        f"{export} not read: its list of files is 6,064 bytes, more than the 4,096 bytes a zip's list may be; "
        "raise it with ARCHIVIST_UNZIP_MAX_DIRECTORY_BYTES=1MB."
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ARCHIVIST_UNZIP_MAX_BYTES", "lots"),
        ("ARCHIVIST_UNZIP_MAX_RATIO", "-1"),
        ("ARCHIVIST_EXPORT_MAX_CONVERSATION_BYTES", "0"),
    ],
)
def test_a_setting_that_is_no_value_is_told_not_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    export = write_zip(tmp_path / "export.zip", [("conversations.json", "[]")])
    monkeypatch.setenv(name, value)
    assert f"the setting {name}={value!r} is not" in (claude_export.check(export) or "")
    assert read("claude-export", export)[1][0].startswith(f"the setting {name}={value!r} is not")


def test_sizes_are_given_in_bytes_or_with_a_unit() -> None:
    assert [archives.parse_size(text) for text in ("1048576", "500MB", "4GB", "1.5 GiB", "64 kb")] == [
        MB,
        500 * MB,
        4 * GB,
        3 * GB // 2,
        64 * 1024,
    ]
    with pytest.raises(ValueError):
        archives.parse_size("4 gigabytes")


# Run first in the child: at its exit it writes down its own peak resident memory. The kernel's
# counts of a child (os.wait4, RUSAGE_CHILDREN, even the child's own RUSAGE_SELF) include the
# memory it shared with this process before it ran Python (fork), which in a whole test run
# is this process's own; VmHWM is the peak of the new process alone.
PEAK_PROBE = """
import atexit, os
def _peak():
    with open("/proc/self/status") as status, open(os.environ["ARCHIVIST_TEST_PEAK_FILE"], "w") as out:
        out.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
atexit.register(_peak)
"""


def peak_memory(script: str, *args: str, env: dict[str, str] | None = None) -> tuple[bytes, int]:
    """What a fresh Python printed running ``script``, and its own peak resident memory in bytes (VmHWM)."""
    if not Path("/proc/self/status").exists():
        pytest.skip("the peak of a process alone is read from /proc")
    with tempfile.TemporaryDirectory() as scratch:
        peak_file = Path(scratch) / "peak"
        command = [sys.executable, "-c", PEAK_PROBE + textwrap.dedent(script), *args]
        environment = {**os.environ, **(env or {}), "ARCHIVIST_TEST_PEAK_FILE": str(peak_file)}
        finished = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environment)
        assert finished.returncode == 0, finished.stdout
        return finished.stdout, int(peak_file.read_text()) * 1024


def test_the_reader_holds_the_1_5_gb_string_bomb_in_under_500_mb(tmp_path: Path) -> None:
    """One conversation of a single 1.5 GB string, read for real (its ratio allowed): skipped, never held."""
    head = conversations_json(claude("first", "hello"))[:-1] + ', {"uuid": "huge", "name": "'
    tail = '", "chat_messages": []}, ' + json.dumps(claude("after", "bye")) + "]"
    export = bomb(tmp_path / "export.zip", [(head.encode(), 1), (b"a" * MB, 1536), (tail.encode(), 1)])
    script = """
        import json, sys
        from archivist.agents import claude_export
        problems = []
        keys = [session.key for session in claude_export.read(sys.argv[1], problems)]
        print(json.dumps([keys, problems]))
    """
    output, peak = peak_memory(script, str(export), env={"ARCHIVIST_UNZIP_MAX_RATIO": "2000"})
    keys, told = json.loads(output)
    assert keys == ["first", "after"]
    assert told == [
        "conversations.json: conversation 2 skipped: over 16 MB, more than one conversation read whole may have; "
        "raise it with ARCHIVIST_EXPORT_MAX_CONVERSATION_BYTES=32MB"
    ]
    assert peak < 500 * MB, f"peak resident memory {peak / MB:.0f} MB"


def test_a_whole_index_run_holds_the_largest_conversation_it_reads_in_under_500_mb(
    tmp_path: Path, workspace: Path
) -> None:
    """Just under the size limit, and an emoji in it: every string of it four bytes a character."""
    text = "word " * ((claude_export.MAX_CONVERSATION_BYTES - 1000) // 5) + "\N{GRINNING FACE}"
    export = tmp_path / "export"
    export.mkdir()
    (export / "conversations.json").write_text(conversations_json(claude("wide", text)))
    (export / "users.json").write_text("[]")
    script = """
        import sys
        from archivist.cli import cli
        cli(["index", sys.argv[1], "--source", "claude-export=" + sys.argv[2]])
    """
    output, peak = peak_memory(script, str(workspace), str(export))
    assert stored(workspace) == ["Chat wide"], output
    assert peak < 500 * MB, f"peak resident memory {peak / MB:.0f} MB"


# --- defect 3: one bad conversation skips that conversation ----------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("zipped", [False, True])
def test_a_conversation_over_the_size_limit_is_skipped_and_the_ones_after_it_are_read(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch, kind: str, zipped: bool
) -> None:
    monkeypatch.setenv("ARCHIVIST_EXPORT_MAX_CONVERSATION_BYTES", "1MB")
    make = CONVERSATION[kind]
    text = conversations_json(make("one", "hello"), make("huge", incompressible(3 * MB)), make("three", "bye"))
    export = tmp_path / "export"
    export.mkdir()
    (export / "conversations.json").write_text(text)
    for name, data in MARKERS[kind].items():
        (export / name).write_text(data)
    if zipped:
        export = write_zip(tmp_path / "export.zip", [("conversations.json", text), *MARKERS[kind].items()])
    exit_code, output = index(workspace, kind, export)
    assert exit_code == 0, output
    assert stored(workspace) == ["Chat one", "Chat three"]
    assert problems(workspace) == [
        "conversations.json: conversation 2 skipped: over 1 MB, more than one conversation read whole may have; "
        "raise it with ARCHIVIST_EXPORT_MAX_CONVERSATION_BYTES=2MB"
    ]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", [0, 1])
def test_a_conversation_of_100000_nested_brackets_is_skipped_and_the_rest_are_read(
    tmp_path: Path, workspace: Path, kind: str, where: int
) -> None:
    """First (what check() looks at to tell the kinds apart) or in the middle: skipped, never the export."""
    make = CONVERSATION[kind]
    items: list[dict[str, Any] | str] = [make("one", "hello"), make("three", "bye")]
    items.insert(where, with_field(make("deep", "zanzibar"), DEEP))
    export = write_zip(tmp_path / "export.zip", [("conversations.json", conversations_json(*items))])
    assert READERS[kind].check(export) is None
    exit_code, output = index(workspace, kind, export)
    assert exit_code == 0, output
    assert stored(workspace) == ["Chat one", "Chat three"]
    assert problems(workspace) == [f"conversations.json: conversation {where + 1} skipped: {TOO_DEEP}"]


def test_check_passes_over_conversations_it_cannot_hold_to_tell_the_kinds_apart(tmp_path: Path) -> None:
    export = tmp_path / "export"
    export.mkdir()
    items = [with_field(chatgpt("deep", "x"), DEEP), chatgpt("shaped", "hello")]
    (export / "conversations.json").write_text(conversations_json(*items))
    assert chatgpt_export.check(export) is None
    assert (claude_export.check(export) or "").startswith(f"{export} looks like a ChatGPT export")
    (export / "conversations.json").write_text(conversations_json(with_field(claude("d", "x"), DEEP)))
    (export / "users.json").write_text("[]")
    assert claude_export.check(export) is None  # nothing else to go by: the files beside it tell


# --- defect 4: links out of the export folder -------------------------------------------------


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path this process opens from now on, as the file system resolves it."""
    paths: list[str] = []
    real_open, real_os_open = io.open, os.open

    def spy_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, str | bytes | os.PathLike):
            paths.append(os.path.realpath(file))
        return real_open(file, *args, **kwargs)

    def spy_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        paths.append(os.path.realpath(path))
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(io, "open", spy_open)
    monkeypatch.setattr("builtins.open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    return paths


@pytest.mark.parametrize("kind", KINDS)
def test_a_conversations_file_that_links_out_of_the_export_folder_is_not_opened(
    tmp_path: Path, workspace: Path, opened: list[str], kind: str
) -> None:
    make = CONVERSATION[kind]
    outside = tmp_path / "elsewhere" / "secret.json"
    outside.parent.mkdir()
    outside.write_text(conversations_json(make("outside", "zanzibar")))
    export = tmp_path / "export"
    export.mkdir()
    (export / "conversations.json").symlink_to(outside)
    (export / "conversations-1.json").write_text(conversations_json(make("inside", "hello")))
    for name, data in MARKERS[kind].items():
        (export / name).symlink_to(outside.parent / name)  # the other files of the folder too
        (outside.parent / name).write_text(data)
    opened.clear()  # from here on
    exit_code, output = index(workspace, kind, export)
    assert exit_code == 0, output
    assert stored(workspace) == ["Chat inside"]
    names = ["conversations.json", *MARKERS[kind]]
    assert sorted(problems(workspace)) == sorted([*(f"{name}: {LINK_OUT}" for name in names), KEPT])
    assert not {str(outside), *(str(outside.parent / name) for name in MARKERS[kind])} & set(opened)
    assert str(export / "conversations-1.json") in opened  # the spy sees what is opened


def test_an_export_whose_only_conversations_file_links_out_is_refused_in_a_sentence(
    tmp_path: Path, workspace: Path, opened: list[str]
) -> None:
    outside = tmp_path / "secret.json"
    outside.write_text(conversations_json(claude("outside", "zanzibar")))
    export = tmp_path / "export"
    export.mkdir()
    (export / "conversations.json").symlink_to(outside)
    opened.clear()
    exit_code, output = index(workspace, "claude-export", export)
    assert exit_code == 1
    assert f"holds no conversations.json it may read (conversations.json: {LINK_OUT})" in " ".join(output.split())
    assert str(outside) not in opened


def test_a_link_that_stays_inside_the_export_folder_is_read(tmp_path: Path, workspace: Path) -> None:
    export = tmp_path / "export"
    (export / "data").mkdir(parents=True)
    (export / "data" / "all.json").write_text(conversations_json(claude("linked", "hello")))
    (export / "conversations.json").symlink_to(export / "data" / "all.json")
    exit_code, output = index(workspace, "claude-export", export)
    assert exit_code == 0, output
    assert stored(workspace) == ["Chat linked"] and problems(workspace) == []


def test_an_export_refused_by_a_limit_keeps_what_the_archive_holds_of_it(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = write_zip(
        tmp_path / "export.zip",
        [
            ("conversations.json", conversations_json(claude("c0", "first"), claude("c1", "second"))),
            ("users.json", "[]"),
        ],
    )
    assert index(workspace, "claude-export", export)[0] == 0
    db = sqlite_utils.Database(archive_path(workspace))
    stored = db.execute("SELECT key, title FROM documents ORDER BY key").fetchall()
    assert len(stored) == 2
    monkeypatch.setenv("ARCHIVIST_UNZIP_MAX_BYTES", "10")  # the same export, now over a limit
    export.touch()
    result = CliRunner().invoke(cli, ["index", str(workspace)])
    assert result.exit_code == 0, result.output
    assert db.execute("SELECT key, title FROM documents ORDER BY key").fetchall() == stored
    told = [reason for _, reason in db.execute("SELECT status, reason FROM index_problems")]
    assert len(told) == 2 and "raise it with ARCHIVIST_UNZIP_MAX_BYTES=" in told[0] and told[1] == KEPT
    monkeypatch.delenv("ARCHIVIST_UNZIP_MAX_BYTES")
    export.touch()
    assert CliRunner().invoke(cli, ["index", str(workspace)]).exit_code == 0
    assert db.execute("SELECT count(*) FROM index_problems").fetchone() == (0,)


@pytest.mark.parametrize(
    "damage",
    ["a setting that is no value", "the zip cut short", "a folder without its conversations"],
)
def test_an_export_that_cannot_be_read_now_keeps_what_the_archive_holds_of_it(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    items = conversations_json(claude("c0", "first"), claude("c1", "second"))
    if damage == "a folder without its conversations":
        export = tmp_path / "export"
        export.mkdir()
        (export / "conversations.json").write_text(items)
        (export / "users.json").write_text("[]")
    else:
        export = write_zip(tmp_path / "export.zip", [("conversations.json", items), ("users.json", "[]")])
    assert index(workspace, "claude-export", export)[0] == 0
    db = sqlite_utils.Database(archive_path(workspace))
    stored = db.execute("SELECT key, title FROM documents ORDER BY key").fetchall()
    assert len(stored) == 2
    if damage == "a setting that is no value":
        monkeypatch.setenv("ARCHIVIST_UNZIP_MAX_BYTES", "8 GBs")
        export.touch()
    elif damage == "the zip cut short":
        export.write_bytes(export.read_bytes()[:200])
    else:
        (export / "conversations.json").unlink()
    result = CliRunner().invoke(cli, ["index", str(workspace)])
    assert result.exit_code == 0, result.output
    assert db.execute("SELECT key, title FROM documents ORDER BY key").fetchall() == stored
    told = [reason for (reason,) in db.execute("SELECT reason FROM index_problems")]
    assert told[-1] == KEPT, told
