"""A kind's reader is a ``Reader`` of its own kind: checked by mypy for the kinds built in, and
by the registry for every kind when its reader is loaded (a plugin's reader named wrongly is refused)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from archivist.agents import Session, registry
from archivist.agents.hookspecs import Kind, Register, hookimpl
from archivist.agents.reader import LogFiles, NewestFirst, Reader, ReadsOn

KIND = "tiny-other"  # what this module reads, as its reader: not the name the plugin below gives it
ABILITIES = {"read_from": ReadsOn, "newest": NewestFirst, "log_files": LogFiles}
ROOT = Path(__file__).resolve().parent.parent
MYPY_CONFIG = "[mypy]\npython_version = 3.11\nignore_missing_imports = True\nfollow_imports = silent\n"


def check(path: Path) -> str | None:
    return None if path.is_dir() else f"{path} is not a folder: expected one."


def read(path: Path, problems: list[str] | None = None) -> Iterator[Session]:
    yield from ()


class Plugin:
    """A package that registers kinds whose readers are not what their entries say."""

    @hookimpl
    def register_agent_kinds(self, register: Register) -> None:
        register(Kind("mislabelled", __name__, "logs its reader calls another kind's"))
        register(Kind("readerless", "archivist.agents.hookspecs", "logs of a module that reads nothing"))


@pytest.fixture
def plugin() -> Iterator[Plugin]:
    added = Plugin()
    registry.pm.register(added)
    try:
        yield added
    finally:
        registry.pm.unregister(added)


def built_in() -> dict[str, Kind]:
    return registry.kinds(registry.manager(entry_points=False))


def typed(program: str, folder: Path) -> tuple[str, int]:
    """What mypy says of ``program`` (its report and exit status), with the archive's modules to
    import; in a process of its own, as mypy changes the interpreter's settings (its recursion limit)."""
    config = folder / "mypy.ini"
    config.write_text(MYPY_CONFIG, encoding="utf-8")
    command = ["--config-file", str(config), "--cache-dir", str(folder / "cache"), "--no-error-summary", "-c", program]
    result = subprocess.run([sys.executable, "-m", "mypy", *command], capture_output=True, text=True, cwd=ROOT)
    return result.stdout + result.stderr, result.returncode


def test_every_reader_built_in_is_typed_as_the_readers_it_claims_to_be(tmp_path: Path) -> None:
    lines = ["from archivist.agents import reader"]
    for number, kind in enumerate(built_in().values()):
        module = importlib.import_module(kind.reader)
        lines += [f"import {kind.reader} as m{number}", f"r{number}: reader.Reader = m{number}"]
        lines += [
            f"{name}{number}: reader.{protocol.__name__} = m{number}"
            for name, protocol in ABILITIES.items()
            if hasattr(module, name)
        ]
    report, status = typed("\n".join(lines), tmp_path)
    assert (report, status) == ("", 0)
    assert sum(line.startswith("newest") for line in lines) >= 1 and sum("ReadsOn" in line for line in lines) >= 2


def test_a_module_whose_functions_do_not_fit_is_not_a_reader_for_mypy(tmp_path: Path) -> None:
    program = (
        "from archivist.agents import reader\n"
        "import archivist.agents.aider as aider\n"
        "import archivist.agents.hookspecs as hookspecs\n"
        "typed_wrongly: reader.NewestFirst = aider\n"
        "empty: reader.Reader = hookspecs\n"
    )
    report, status = typed(program, tmp_path)
    assert status == 1
    assert "<string>:4: error" in report and "newest" in report
    assert (
        '<string>:5: error: Incompatible types in assignment (expression has type Module, variable has type "Reader")'
        in report
    )


def test_each_reader_built_in_is_a_reader_of_its_kind() -> None:
    for name, kind in built_in().items():
        module = registry.reader(name)
        assert isinstance(module, Reader) and name == module.KIND and module.__name__ == kind.reader
        for ability, protocol in ABILITIES.items():
            assert isinstance(module, protocol) == hasattr(module, ability)


def test_a_reader_whose_kind_differs_from_its_entry_is_refused_by_name(plugin: Plugin) -> None:
    assert "mislabelled" in registry.names()
    with pytest.raises(registry.NotAReader) as refused:
        registry.reader("mislabelled")
    assert str(refused.value) == (
        f"{__name__} reads the agent-log kind 'tiny-other', not 'mislabelled' as its registry entry says: "
        "a reader's KIND is its entry's name"
    )


def test_a_module_without_a_readers_names_is_refused_by_name(plugin: Plugin) -> None:
    with pytest.raises(
        registry.NotAReader,
        match=r"^archivist.agents.hookspecs, the reader of the agent-log kind 'readerless', has no KIND, check, read$",
    ):
        registry.reader("readerless")


def test_a_refused_reader_leaves_the_other_kinds_readable(plugin: Plugin) -> None:
    with pytest.raises(registry.NotAReader):
        registry.reader("mislabelled")
    for name in built_in():
        assert name == registry.reader(name).KIND


def test_a_source_whose_reader_is_refused_is_skipped_and_the_others_are_read(plugin: Plugin, tmp_path: Path) -> None:
    """A source stored while its kind's reader was one, whose plugin's reader is no longer: the run
    reads every other source, keeps what the archive holds of it, and says why it was not read."""
    import sqlite3

    from conftest import sample_source, write_files

    from archivist.archive.indexer import index_workspace
    from archivist.workspace import archive_path

    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    logs = [("codex", sample_source("codex")), ("claude-code", sample_source("claude-code"))]
    index_workspace(workspace, log_sources=logs)
    with sqlite3.connect(archive_path(workspace)) as db:
        db.execute("UPDATE log_sources SET kind = 'readerless', fingerprint = 'changed' WHERE kind = 'codex'")
        held = db.execute("SELECT count(*) FROM documents WHERE source LIKE 'log:%'").fetchone()[0]
    result = index_workspace(workspace)
    skipped = [problem for problem in result.problems if problem.path.startswith("readerless:")]
    assert [problem.status for problem in skipped] == ["skipped"]
    assert "has no KIND, check, read" in skipped[0].reason
    with sqlite3.connect(archive_path(workspace)) as db:
        assert db.execute("SELECT count(*) FROM documents WHERE source LIKE 'log:%'").fetchone()[0] == held
