"""The kinds built in, as their ``kind.toml`` files declare them, are kept in the cache folder: a start
reads them without parsing TOML, and reads a file again when it changes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from archivist.agents import kinds

ASK = "import sys\nfrom archivist.agents import kinds\nprint([k.name for k in kinds.built_in()], 'tomllib' in sys.modules)\n"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of three kinds built in, read as the package's, with a cache folder of its own."""
    copy = tmp_path / "agents"
    for name in ("aider", "codex", "goose"):
        shutil.copytree(kinds.FOLDER / name, copy / name, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    monkeypatch.setattr(kinds, "FOLDER", copy)
    monkeypatch.setenv("ARCHIVIST_CACHE_DIR", str(tmp_path / "cache"))
    kinds.built_in.cache_clear()
    yield copy
    kinds.built_in.cache_clear()


def test_a_new_process_reads_the_kinds_from_the_cache_without_toml(tmp_path: Path) -> None:
    folder = tmp_path / "run"  # (a script's folder, first on sys.path, that does not change)
    folder.mkdir()
    (folder / "ask.py").write_text(ASK, encoding="utf-8")
    env = {**os.environ, "ARCHIVIST_CACHE_DIR": str(tmp_path / "cache")}
    first, second = (
        subprocess.run([sys.executable, str(folder / "ask.py")], capture_output=True, text=True, check=True, env=env)
        for _ in range(2)
    )
    names = str([kind.name for kind in kinds.built_in()])
    assert first.stdout.strip() == f"{names} True"  # read, and kept
    assert second.stdout.strip() == f"{names} False"  # from the cache


def test_the_kinds_kept_are_those_read(folder: Path) -> None:
    read = kinds.built_in()
    kinds.built_in.cache_clear()
    assert kinds.built_in() == read and [kind.name for kind in read] == ["aider", "codex", "goose"]


def test_a_changed_declaration_is_read_again(folder: Path) -> None:
    kinds.built_in()
    declaration = folder / "codex" / kinds.DECLARATION
    text = declaration.read_text(encoding="utf-8")
    said = next(line for line in text.splitlines() if line.startswith("description"))
    declaration.write_text(text.replace(said, 'description = "a description changed since"'), encoding="utf-8")
    kinds.built_in.cache_clear()
    assert {kind.name: kind.description for kind in kinds.built_in()}["codex"] == "a description changed since"


def test_each_folder_of_kinds_keeps_its_own(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two checkouts used in turn do not push each other's kinds out of the cache."""
    ours = kinds._cache_file()
    kinds.built_in()
    other = tmp_path / "other-checkout"
    shutil.copytree(folder / "aider", other / "aider")
    monkeypatch.setattr(kinds, "FOLDER", other)
    kinds.built_in.cache_clear()
    assert [kind.name for kind in kinds.built_in()] == ["aider"]
    assert kinds._cache_file() != ours and ours.is_file() and kinds._cache_file().is_file()


def test_a_kind_added_or_removed_is_seen(folder: Path) -> None:
    kinds.built_in()
    shutil.rmtree(folder / "goose")
    kinds.built_in.cache_clear()
    assert [kind.name for kind in kinds.built_in()] == ["aider", "codex"]


@pytest.mark.parametrize("content", ["", "{", "[]", '{"stamp": 1}', '{"stamp": null, "tables": [1]}'])
def test_a_damaged_cache_is_read_again(folder: Path, content: str) -> None:
    read = kinds.built_in()
    kinds.built_in.cache_clear()
    cache = kinds._cache_file()
    cache.write_text(content, encoding="utf-8")
    assert kinds.built_in() == read
    assert json.loads(cache.read_text(encoding="utf-8"))["stamp"][0] == str(folder)


def test_a_cache_of_the_right_stamp_but_wrong_tables_is_read_again(folder: Path) -> None:
    read = kinds.built_in()
    kinds.built_in.cache_clear()
    cache = kinds._cache_file()
    kept = json.loads(cache.read_text(encoding="utf-8"))
    cache.write_text(json.dumps({**kept, "tables": kept["tables"][:1]}), encoding="utf-8")
    assert kinds.built_in() == read


def test_a_cache_that_cannot_be_written_costs_only_the_reading(folder: Path, tmp_path: Path, monkeypatch) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("ARCHIVIST_CACHE_DIR", str(blocked / "cache"))
    assert [kind.name for kind in kinds.built_in()] == ["aider", "codex", "goose"]


def test_a_kept_table_that_is_not_a_kind_is_read_again_from_its_file(folder: Path) -> None:
    read = kinds.built_in()
    cache = kinds._cache_file()
    kept = json.loads(cache.read_text(encoding="utf-8"))
    kept["tables"][1] = {"name": 7}  # (the stamp still matches: only the kept table is wrong)
    cache.write_text(json.dumps(kept), encoding="utf-8")
    kinds.built_in.cache_clear()
    assert kinds.built_in() == read
    assert json.loads(cache.read_text(encoding="utf-8"))["tables"][1] != {"name": 7}  # kept again, whole
