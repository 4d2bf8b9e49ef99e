"""The kinds of agent log register themselves, and every list of kinds is the registry's.

A kind defined here (``tiny``: a folder of ``*.tiny`` files, one session each) is
registered on the plugin manager at run time, as a package's plugin would be, and is
from then on accepted by ``archivist index --source``, found by ``sources --discover``,
listed by ``archivist sources`` and stored: nothing else in the project names it.

Run as a script (``python tests/test_agent_kinds.py``), this file writes docs/sources.md's
generated tables of kinds again from the registry.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlite_utils
from click.testing import CliRunner
from conftest import ROOT, write_files

from archivist.agents import Message, Session, kinds, registry, unreadable
from archivist.agents.hookspecs import Kind, Location, Register, hookimpl
from archivist.archive import sessions, sources
from archivist.errors import ArchivistError
from archivist.workspace import archive_path

SOURCES_DOC = ROOT / "docs" / "sources.md"
NOTE = {"notes/a.md": "# A\n\nalpha\n"}  # a workspace's one note
BEGIN = "<!-- The kinds of agent log, generated from the registry: python tests/test_agent_kinds.py -->"
END = "<!-- end of the generated kinds -->"
SYSTEM_NAMES = {"linux": "Linux", "macos": "macOS", "windows": "Windows"}


# --- a kind of agent log defined here, its reader and its plugin ----------------------------

KIND = "tiny"
SUFFIX = ".tiny"


def check(path: Path) -> str | None:
    """Why ``path`` is not a folder of .tiny files, or None."""
    if not path.is_dir() or not any(path.glob(f"*{SUFFIX}")):
        return f"{path} holds no {SUFFIX} file: expected a folder of them."
    return None


def read(path: Path, problems: list[str] | None = None) -> Iterator[Session]:
    """Each .tiny file as a session: a line ``role: text`` a message."""
    for file in sorted(path.glob(f"*{SUFFIX}")):
        said = [line.partition(": ") for line in file.read_text(encoding="utf-8").splitlines() if ": " in line]
        messages = [Message(role, text, "2025-11-23T05:00:00Z") for role, _, text in said]
        yield Session(key=file.stem, agent=KIND, title=messages[0].text, messages=messages, files=[file])


class TinyPlugin:
    """What a package that adds the tiny kind registers (its reader: this module)."""

    @hookimpl
    def register_agent_kinds(self, register: Register) -> None:
        register(
            Kind(
                KIND,
                __name__,
                "tiny logs, one file a session",
                locations=(Location("~/.tiny", "logs", env="TINY_HOME"),),
            )
        )


@pytest.fixture
def tiny() -> Iterator[TinyPlugin]:
    plugin = TinyPlugin()
    registry.pm.register(plugin)
    try:
        yield plugin
    finally:
        registry.pm.unregister(plugin)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of its own, where no kind's variable moves the logs elsewhere."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("USERPROFILE", str(folder))
    for name in registry.variables():
        monkeypatch.delenv(name, raising=False)
    return folder


def run(*args: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli(), [str(arg) for arg in args])
    return result.exit_code, result.stdout, result.stderr


def cli():  # imported when used
    from archivist.cli import cli

    return cli


def write_tiny(folder: Path, name: str, *lines: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}{SUFFIX}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def stored(workspace: Path) -> list[tuple[str, str, int]]:
    db = sqlite_utils.Database(archive_path(workspace))
    return [
        tuple(row)
        for row in db.execute(
            "SELECT d.type, d.title, (SELECT count(*) FROM messages m WHERE m.document_id = d.id) FROM documents d"
            " WHERE d.source LIKE 'log:%' ORDER BY d.key"
        ).fetchall()
    ]


# --- a kind added at run time: accepted, discovered, listed, stored ---------------------------


def test_a_kind_registered_at_run_time_is_in_every_list_of_kinds(tiny: TinyPlugin, home: Path) -> None:
    assert KIND in registry.names() and KIND in kinds.KINDS and KIND in sessions.KINDS
    assert registry.reader(KIND) is sys.modules[__name__]
    with pytest.raises(ArchivistError) as unknown:
        sources.parse_argument("nothing=/tmp")
    assert "Known kinds: " + ", ".join(registry.names()) + "." in unknown.value.message
    assert sources.parse_argument(f"{KIND}=~/x") == (KIND, home / "x")
    assert (KIND, home / ".tiny" / "logs") in sources.default_locations({}, home)
    assert (KIND, home / "t" / "logs") in sources.default_locations({"TINY_HOME": str(home / "t")}, home)
    assert "TINY_HOME" in registry.variables()


def test_a_kind_registered_at_run_time_is_indexed_listed_and_stored(
    tiny: TinyPlugin, home: Path, tmp_path: Path
) -> None:
    workspace = write_files(tmp_path / "ws", NOTE)
    logs = write_tiny(tmp_path / "logs", "first", "user: why is the build red", "assistant: a flaky test")

    code, _, err = run("index", workspace, "--source", f"{KIND}={logs}")
    assert code == 0, err
    code, out, err = run("sources", workspace, "--json")
    assert code == 0, err
    assert [(row["kind"], row["path"], row["documents"], row["messages"]) for row in json.loads(out)] == [
        (KIND, str(logs), 1, 2)
    ]
    assert stored(workspace) == [(KIND, "why is the build red", 2)]

    discovered = write_tiny(home / ".tiny" / "logs", "second", "user: where are the logs", "assistant: at home")
    code, _, err = run("sources", workspace, "--discover")
    assert code == 0, err
    assert f"Found {KIND}: {discovered}" in err
    assert stored(workspace) == [(KIND, "why is the build red", 2), (KIND, "where are the logs", 2)]


def test_a_source_whose_kind_is_no_longer_installed_is_kept_and_told(
    tiny: TinyPlugin, home: Path, tmp_path: Path
) -> None:
    workspace = write_files(tmp_path / "ws", NOTE)
    logs = write_tiny(tmp_path / "logs", "first", "user: why is the build red", "assistant: a flaky test")
    assert run("index", workspace, "--source", f"{KIND}={logs}")[0] == 0
    registry.pm.unregister(tiny)
    try:
        code, _, err = run("index", workspace)
        assert code == 0, err
        assert stored(workspace) == [(KIND, "why is the build red", 2)]
        db = sqlite_utils.Database(archive_path(workspace))
        (reason,) = [row[0] for row in db.execute("SELECT reason FROM index_problems WHERE path LIKE 'tiny:%'")]
        assert reason == sessions.NO_READER.format(kind=KIND)
        with pytest.raises(ArchivistError, match="Unknown source kind 'tiny'"):
            sources.parse_argument(f"{KIND}={logs}")
        code, _, err = run("sources", workspace, "--remove", f"{KIND}={logs}")  # to forget it
        assert code == 0 and f"Removed {KIND}: {logs} (1 documents)" in err, err
        assert stored(workspace) == []
    finally:
        registry.pm.register(tiny)  # as the fixture left it


def test_a_package_installed_with_an_entry_point_adds_a_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution on the path whose entry point of the group archivist registers a kind."""
    module = "archivist_kind_example"
    (tmp_path / f"{module}.py").write_text(
        "from archivist.agents.hookspecs import Kind, hookimpl\n\n\n"
        "@hookimpl\n"
        "def register_agent_kinds(register):\n"
        f"    register(Kind('example', '{module}_reader', 'example logs'))\n",
        encoding="utf-8",
    )
    info = tmp_path / "archivist_kind_example-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: archivist-kind-example\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[archivist]\nexample = {module}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    try:
        found = registry.kinds(registry.manager())
    finally:
        sys.modules.pop(module, None)
    assert found["example"] == Kind("example", f"{module}_reader", "example logs")
    assert "example" not in registry.kinds(registry.manager(entry_points=False))


# --- the kinds built in ------------------------------------------------------------------------


def built_in() -> dict[str, Kind]:
    return registry.kinds(registry.manager(entry_points=False))


def test_each_kind_built_in_is_a_file_of_kinds_that_names_its_reader() -> None:
    found = built_in()
    assert list(found) == sorted(found)
    files = sorted(path.parent.name for path in kinds.FOLDER.glob(f"*/{kinds.DECLARATION}"))
    assert len(found) == len(files)  # one kind a file
    assert [kind.reader.rsplit(".", 1)[1] for kind in found.values()] == files  # named for its reader
    for name, kind in found.items():
        reader = registry.reader(name)
        assert reader.__name__ == kind.reader and name == reader.KIND
        assert callable(reader.check) and callable(reader.read)


def test_a_kind_file_with_a_key_it_cannot_have_is_refused_by_name() -> None:
    table = {"name": "foo", "reader": "foo_reader", "description": "Foo's sessions", "colour": "red"}
    with pytest.raises(ValueError, match=r"kinds/foo.toml: unknown keys colour"):
        Kind.from_table(table, "kinds/foo.toml")
    located = {**table, "colour": None, "locations": [{"folder": "~/.foo", "unde": "x"}]}
    del located["colour"]
    with pytest.raises(ValueError, match=r"unknown keys locations.unde"):
        Kind.from_table(located, "kinds/foo.toml")
    with pytest.raises(ValueError, match="begins with ~/ or /"):
        Kind.from_table({**located, "locations": [{"folder": "foo"}]}, "kinds/foo.toml")
    kind = Kind.from_table({**located, "locations": [{"folder": "~/.foo", "systems": ["macos"]}]}, "kinds/foo.toml")
    assert kind.locations == (Location("~/.foo", systems=("macos",)),)
    bad = {
        "kinds/foo.toml: name missing": {"reader": "r", "description": "d"},
        "kinds/foo.toml: locations.systems of the wrong type": {
            **located,
            "locations": [{"folder": "~/.f", "systems": "linux"}],
        },
        "kinds/foo.toml: locations.several of the wrong type": {
            **located,
            "locations": [{"folder": "~/.f", "several": "no"}],
        },
        r"kinds/foo.toml: locations is a list of tables": {**located, "locations": {"folder": "~/.f"}},
        "kinds/foo.toml: description of the wrong type": {**located, "description": 3, "locations": []},
        "kinds/foo.toml: an agent-log kind is named": {**located, "name": "Foo Bar", "locations": []},
    }
    for message, table in bad.items():
        with pytest.raises(ValueError, match=message):
            Kind.from_table(table, "kinds/foo.toml")


def test_a_kind_file_that_is_not_toml_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / kinds.DECLARATION).write_text('name = "broken\n', encoding="utf-8")
    monkeypatch.setattr(kinds, "FOLDER", tmp_path)
    kinds.built_in.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"archivist/agents/broken/kind.toml is not an agent-log kind: "):
            kinds.built_in()
    finally:
        kinds.built_in.cache_clear()


def test_naming_the_kinds_loads_no_reader() -> None:
    """The command's help and a search's checks name the kinds; none of the readers is imported for it."""
    readers = sorted(kind.reader for kind in built_in().values())
    script = (
        "import sys\n"
        "from archivist.agents.kinds import KINDS\n"
        "import archivist.queries.rules\n"
        f"print([name for name in {readers!r} if name in sys.modules])\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    assert result.stdout.strip() == "[]"


def test_default_locations_are_each_systems_and_variables_move_them(tmp_path: Path) -> None:
    home = tmp_path / "home"

    def where(environ: dict[str, str], system: str) -> list[tuple[str, Path]]:
        return sources.default_locations(environ, home, system)

    code = home / ".config" / "Code" / "User" / "globalStorage"  # VS Code's, on Linux
    assert where({}, "linux") == [
        ("amp", home / ".local" / "share" / "amp" / "threads"),
        ("antigravity", home / ".gemini" / "antigravity" / "brain"),
        ("antigravity", home / ".gemini" / "antigravity-ide" / "brain"),
        ("claude-code", home / ".claude" / "projects"),
        ("claude-code", home / ".config" / "claude" / "projects"),
        ("cline", code / "saoudrizwan.claude-dev"),
        ("cline", home / ".cline" / "data"),
        ("cline-cli", home / ".cline" / "data" / "sessions"),
        ("codebuff", home / ".config" / "manicode" / "projects"),
        ("codex", home / ".codex" / "sessions"),
        ("continue", home / ".continue" / "sessions"),
        ("copilot", home / ".config" / "Code" / "User"),
        ("copilot", home / ".copilot" / "session-state"),
        ("cursor", home / ".config" / "Cursor" / "User"),
        ("cursor", home / ".cursor" / "projects"),
        ("forge", home / ".forge"),
        ("forge", home / "forge"),
        ("gemini-cli", home / ".gemini" / "tmp"),
        ("goose", home / ".local" / "share" / "goose" / "sessions"),
        ("gptme", home / ".local" / "share" / "gptme" / "logs"),
        ("grok-cli", home / ".grok" / "sessions"),
        ("hermes", home / ".hermes"),
        ("junie", home / ".junie" / "sessions"),
        ("kilo-code", code / "kilocode.kilo-code"),
        ("kimi-cli", home / ".kimi"),
        ("kiro", home / ".kiro" / "sessions"),
        ("kiro", home / ".config" / "Kiro" / "User" / "globalStorage" / "kiro.kiroagent"),
        ("kiro", home / ".kiro-server" / "data" / "User" / "globalStorage" / "kiro.kiroagent"),
        ("kiro", home / ".local" / "share" / "kiro-cli" / "data.sqlite3"),
        ("kiro", home / ".local" / "share" / "amazon-q" / "data.sqlite3"),
        ("llm", home / ".config" / "io.datasette.llm" / "logs.db"),
        ("openclaw", home / ".openclaw" / "agents"),
        ("opencode", home / ".local" / "share" / "opencode"),
        ("openhands", home / ".openhands" / "conversations"),
        ("pi", home / ".pi" / "agent" / "sessions"),
        ("qoder", home / ".qoder" / "projects"),
        ("qoder", home / ".config" / "Qoder" / "SharedClientCache" / "cli" / "projects"),
        ("qwen-code", home / ".qwen"),
        ("roo-code", code / "rooveterinaryinc.roo-cline"),
        ("trae", home / ".config" / "Trae" / "User"),
        ("trae", home / ".config" / "Trae CN" / "User"),
        ("warp", home / ".local" / "state" / "warp-terminal"),
        ("windsurf", home / ".windsurf" / "transcripts"),
        ("zed", home / ".local" / "share" / "zed" / "threads"),
    ]
    assert ("llm", home / "Library" / "Application Support" / "io.datasette.llm" / "logs.db") in where({}, "macos")
    roaming = home / "AppData" / "Roaming"
    assert where({}, "windows") == [
        ("amp", home / ".local" / "share" / "amp" / "threads"),
        ("antigravity", home / ".gemini" / "antigravity" / "brain"),
        ("antigravity", home / ".gemini" / "antigravity-ide" / "brain"),
        ("claude-code", home / ".claude" / "projects"),
        ("cline", roaming / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev"),
        ("cline", home / ".cline" / "data"),
        ("cline-cli", home / ".cline" / "data" / "sessions"),
        ("codebuff", home / ".config" / "manicode" / "projects"),
        ("codex", home / ".codex" / "sessions"),
        ("continue", home / ".continue" / "sessions"),
        ("copilot", roaming / "Code" / "User"),
        ("copilot", home / ".copilot" / "session-state"),
        ("copilot-vs", home / "AppData" / "Local" / "Temp" / "VSGitHubCopilotLogs" / "traces"),
        ("cursor", roaming / "Cursor" / "User"),
        ("cursor", home / ".cursor" / "projects"),
        ("forge", home / ".forge"),
        ("forge", home / "forge"),
        ("gemini-cli", home / ".gemini" / "tmp"),
        ("goose", roaming / "Block" / "goose" / "data" / "sessions"),
        ("gptme", home / "AppData" / "Local" / "gptme" / "gptme" / "logs"),
        ("grok-cli", home / ".grok" / "sessions"),
        ("hermes", home / "AppData" / "Local" / "hermes"),
        ("junie", home / ".junie" / "sessions"),
        ("kilo-code", roaming / "Code" / "User" / "globalStorage" / "kilocode.kilo-code"),
        ("kimi-cli", home / ".kimi"),
        ("kiro", home / ".kiro" / "sessions"),
        ("kiro", roaming / "Kiro" / "User" / "globalStorage" / "kiro.kiroagent"),
        ("llm", roaming / "io.datasette.llm" / "logs.db"),
        ("openclaw", home / ".openclaw" / "agents"),
        ("opencode", home / ".local" / "share" / "opencode"),
        ("openhands", home / ".openhands" / "conversations"),
        ("pi", home / ".pi" / "agent" / "sessions"),
        ("qoder", home / ".qoder" / "projects"),
        ("qoder", roaming / "Qoder" / "SharedClientCache" / "cli" / "projects"),
        ("qwen-code", home / ".qwen"),
        ("roo-code", roaming / "Code" / "User" / "globalStorage" / "rooveterinaryinc.roo-cline"),
        ("trae", roaming / "Trae" / "User"),
        ("trae", roaming / "Trae CN" / "User"),
        ("warp", home / "AppData" / "Local" / "warp" / "Warp" / "data"),
        ("windsurf", home / ".windsurf" / "transcripts"),
        ("zed", home / "AppData" / "Local" / "Zed" / "threads"),
    ]
    moved = {
        "CLAUDE_CONFIG_DIR": f"{tmp_path / 'a'},{tmp_path / 'b'}",
        "CLINE_DIR": str(tmp_path / "cline"),
        "CODEX_HOME": str(tmp_path / "codex"),
        "CONTINUE_GLOBAL_DIR": str(tmp_path / "continue"),
        "FORGE_CONFIG": str(tmp_path / "forge"),
        "GEMINI_CLI_HOME": str(tmp_path / "gemini"),
        "GOOSE_PATH_ROOT": str(tmp_path / "goose"),
        "GPTME_LOGS_HOME": str(tmp_path / "gptme"),
        "GROK_HOME": str(tmp_path / "grok"),
        "HERMES_HOME": str(tmp_path / "hermes"),
        "JUNIE_HOME": str(tmp_path / "junie"),
        "KIMI_SHARE_DIR": str(tmp_path / "kimi"),
        "LLM_USER_PATH": str(tmp_path / "llm"),
        "OPENCLAW_STATE_DIR": str(tmp_path / "openclaw"),
        "OPENHANDS_CONVERSATIONS_DIR": str(tmp_path / "openhands"),
        "PI_CODING_AGENT_DIR": str(tmp_path / "pi"),
        "QWEN_RUNTIME_DIR": str(tmp_path / "qwen"),
        "TEMP": str(tmp_path / "temp"),
        "XDG_DATA_HOME": str(tmp_path / "share"),
    }
    expected = [
        ("amp", tmp_path / "share" / "amp" / "threads"),
        ("antigravity", home / ".gemini" / "antigravity" / "brain"),
        ("antigravity", home / ".gemini" / "antigravity-ide" / "brain"),
        ("claude-code", tmp_path / "a" / "projects"),
        ("claude-code", tmp_path / "b" / "projects"),
        ("cline", tmp_path / "cline" / "data"),
        ("cline-cli", tmp_path / "cline" / "data" / "sessions"),
        ("codebuff", home / ".config" / "manicode" / "projects"),
        ("codex", tmp_path / "codex" / "sessions"),
        ("continue", tmp_path / "continue" / "sessions"),
        ("copilot", home / ".copilot" / "session-state"),
        ("cursor", home / ".cursor" / "projects"),
        ("forge", tmp_path / "forge"),
        ("forge", home / "forge"),
        ("gemini-cli", tmp_path / "gemini" / ".gemini" / "tmp"),
        ("goose", tmp_path / "share" / "goose" / "sessions"),
        ("gptme", tmp_path / "gptme"),
        ("grok-cli", tmp_path / "grok" / "sessions"),
        ("hermes", tmp_path / "hermes"),
        ("junie", tmp_path / "junie" / "sessions"),
        ("kimi-cli", tmp_path / "kimi"),
        ("kiro", home / ".kiro" / "sessions"),
        ("kiro", tmp_path / "share" / "kiro-cli" / "data.sqlite3"),
        ("kiro", tmp_path / "share" / "amazon-q" / "data.sqlite3"),
        ("llm", tmp_path / "llm" / "logs.db"),
        ("openclaw", tmp_path / "openclaw" / "agents"),
        ("opencode", tmp_path / "share" / "opencode"),
        ("openhands", tmp_path / "openhands"),
        ("pi", tmp_path / "pi" / "sessions"),
        ("qoder", home / ".qoder" / "projects"),
        ("qwen-code", tmp_path / "qwen"),
        ("windsurf", home / ".windsurf" / "transcripts"),
        ("zed", tmp_path / "share" / "zed" / "threads"),
    ]

    def unmoved(place: tuple[str, Path]) -> bool:  # VS Code's folders, Warp's and Qoder's cache: no variable moves them
        return (
            "globalStorage" in str(place[1])
            or str(place[1]).endswith("User")
            or "SharedClientCache" in str(place[1])
            or place[0] == "warp"
        )

    moved_linux = [place for place in where(moved, "linux") if not unmoved(place)]
    assert moved_linux == expected
    # on Windows Goose keeps its data under its own root, moved by GOOSE_PATH_ROOT; the Kiro CLI's
    # store is declared for Linux and macOS only
    windows_goose = ("goose", tmp_path / "goose" / "data" / "sessions")
    windows_zed = ("zed", home / "AppData" / "Local" / "Zed" / "threads")  # no variable moves Zed's on Windows
    windows_vs = ("copilot-vs", tmp_path / "temp" / "VSGitHubCopilotLogs" / "traces")  # Visual Studio: Windows only
    assert [place for place in where(moved, "windows") if not unmoved(place) and place != windows_vs] == [
        {"goose": windows_goose, "zed": windows_zed}.get(kind, (kind, path))
        for kind, path in expected
        if path.name != "data.sqlite3"
    ]
    assert windows_vs in where(moved, "windows")
    assert registry.this_system("darwin") == "macos" and registry.this_system("win32") == "windows"


def test_a_kind_is_named_for_the_command_line_and_registered_once() -> None:
    for name in ("Claude Code", "claude_code", "-x", "workspace", ""):
        with pytest.raises(ValueError):
            Kind(name, "package.reader", "logs")
    with pytest.raises(ValueError):
        Kind("x", "not a module", "logs")
    with pytest.raises(ValueError):
        Location("relative/folder")

    class Again:
        @hookimpl
        def register_agent_kinds(self, register: Register) -> None:
            register(Kind("codex", "elsewhere.codex", "another codex"))

    plugins = registry.manager(entry_points=False)
    plugins.register(Again())
    with pytest.raises(ValueError, match="'codex' is registered twice"):
        registry.kinds(plugins)


# --- docs/sources.md's tables of kinds----------------------------------------------------------


def code(text: str) -> str:
    return f"`{text}`"


def left_out(kind: Kind) -> str:
    """How many fields the kind's reader leaves out on purpose (its kind.toml's ``[dropped]``)."""
    import tomllib

    declared = Path(kinds.__file__).parent / kind.reader.rsplit(".", 1)[-1] / "kind.toml"
    with declared.open("rb") as file:
        dropped = tomllib.load(file).get("dropped", {})
    return str(len(dropped)) if dropped else "none"


def readme_tables(found: dict[str, Kind]) -> str:
    """docs/sources.md's tables of the kinds: what each reads, and where --discover looks for it."""
    lines = [
        BEGIN,
        "| kind | what it reads | what to point it at | one conversation per |",
        "|---|---|---|---|",
        *(
            f"| {code(kind.name)} | {kind.description} | {kind.source} | {kind.conversation} |"
            for kind in found.values()
        ),
        "",
        "Where each kind's shape was learned, the versions it covers, the usage it records, and how many",
        "fields of its logs its reader leaves out on purpose (each with why, in the `[dropped]` table of its",
        "`kind.toml`):",
        "",
        "| kind | shape learned from | usage | left out |",
        "|---|---|---|---|",
        *(
            f"| {code(kind.name)} | {kind.shape or '—'} | {kind.usage or '—'} | {left_out(kind)} |"
            for kind in found.values()
        ),
        "",
        "`sources --discover` adds the default locations, on the system it runs on, that hold logs of their kind:",
        "",
        "| kind | " + " | ".join(SYSTEM_NAMES.values()) + " | moved by |",
        "|---|" + "---|" * (len(SYSTEM_NAMES) + 1),
    ]
    for kind in found.values():
        if not kind.locations:
            continue
        cells = [
            ", ".join(code(place.shown()) for place in kind.locations if system in place.systems) or "—"
            for system in SYSTEM_NAMES
        ]
        moved = list(
            dict.fromkeys(
                code(place.moved()) + (" (for each folder of a comma-separated list)" if place.several else "")
                for place in kind.locations
                if place.env
            )
        )
        lines.append(f"| {code(kind.name)} | " + " | ".join(cells) + f" | {', '.join(moved) or '—'} |")
    lines += [
        "",
        "What cannot be read, and why (`archivist/agents/unreadable.toml`): `--source NAME=PATH` of one, and",
        "`--discover` finding one in its default location, say so in one sentence:",
        "",
        "| store | what it holds | why it cannot be read | where |",
        "|---|---|---|---|",
        *(
            f"| {code(store.name)} | {store.description} | {store.why} | "
            + (", ".join(code(place.shown()) for place in store.locations) or "nowhere on the machine")
            + " |"
            for store in unreadable.stores().values()
        ),
    ]
    return "\n".join([*lines, END])


def readme_block(text: str) -> str:
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def test_the_readme_tables_of_kinds_are_the_registrys() -> None:
    expected = readme_tables(built_in())
    assert readme_block(SOURCES_DOC.read_text(encoding="utf-8")) == expected, (
        "docs/sources.md's tables of kinds differ from the registry: write them again with python tests/test_agent_kinds.py"
    )


def write_readme() -> None:
    text = SOURCES_DOC.read_text(encoding="utf-8")
    SOURCES_DOC.write_text(text.replace(readme_block(text), readme_tables(built_in())), encoding="utf-8")


if __name__ == "__main__":
    os.chdir(ROOT)
    write_readme()


def test_a_store_that_cannot_be_read_is_told_in_one_sentence_where_it_is_named_or_found(home: Path) -> None:
    stores = unreadable.stores()
    assert stores and not set(stores) & set(registry.names())  # none is a kind, none named as one
    with pytest.raises(ArchivistError) as refused:
        sources.parse_argument(f"antigravity-conversations={home}")
    error = refused.value
    assert (error.code, error.problem) == ("INVALID_SOURCE", "Google Antigravity's conversations cannot be read")
    assert error.why.startswith("Each conversation file") and error.why.count(". ") == 0 and error.why.endswith(".")
    # --discover finds the store where Antigravity keeps it and says why it is not read, once, beside what it reads
    (home / ".gemini" / "antigravity" / "conversations").mkdir(parents=True)
    (home / ".gemini" / "antigravity" / "conversations" / "c1.pb").write_bytes(b"\x8f\x02encrypted")
    workspace = home.parent / "ws"
    workspace.mkdir()
    code, _, stderr = run("sources", workspace, "--discover")
    assert code == 0
    said = [line for line in stderr.splitlines() if line.startswith("Not read: ")]
    assert said == [
        f"Not read: Google Antigravity's conversations at {home / '.gemini/antigravity/conversations'} cannot be read: "
        + stores["antigravity-conversations"].why
    ]


def test_every_store_that_cannot_be_read_says_what_and_why_in_a_sentence() -> None:
    for store in unreadable.stores().values():
        assert store.description and "\n" not in store.why and store.why.endswith(".")
        assert store.sentence().startswith(f"{store.description} cannot be read: ")


def test_every_kind_built_in_says_where_its_shape_was_learned_and_what_usage_it_records() -> None:
    for kind in built_in().values():
        assert kind.shape.strip() and kind.usage.strip(), kind.name
