"""What the installed distributions say is kept between runs, and read again when sys.path changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from archivist import installed


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ARCHIVIST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(installed, "_known", None)
    return tmp_path / "cache" / installed.FILE


def test_the_answers_are_the_distributions_own(cache: Path) -> None:
    assert installed.version("mcp") == metadata.version("mcp")
    assert installed.version("no-such-package-here") is None
    assert installed.entry_points() == [(p.name, p.value) for p in metadata.entry_points(group="archivist")]
    (kept,) = json.loads(cache.read_text(encoding="utf-8"))
    assert kept["versions"] == {"mcp": metadata.version("mcp")}


def test_a_new_process_answers_from_the_cache_without_importlib_metadata(cache: Path, tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from archivist import installed\n"
        "print(installed.version('mcp'), 'importlib.metadata' in sys.modules)\n"
    )
    folder = tmp_path / "run"  # sys.path[0] is the script's folder: one that does not change
    folder.mkdir()
    (folder / "ask.py").write_text(script, encoding="utf-8")
    env = {**os.environ, "ARCHIVIST_CACHE_DIR": str(cache.parent)}
    first, second = (
        subprocess.run([sys.executable, str(folder / "ask.py")], capture_output=True, text=True, check=True, env=env)
        for _ in range(2)
    )
    assert first.stdout.split() == [metadata.version("mcp"), "True"]  # read, and kept
    assert second.stdout.split() == [metadata.version("mcp"), "False"]  # from the cache


def test_a_change_on_sys_path_reads_them_again(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert installed.entry_points() == [(p.name, p.value) for p in metadata.entry_points(group="archivist")]
    site = tmp_path / "site"
    info = site / "archivist_kind_probe-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: archivist-kind-probe\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[archivist]\nprobe = probe_module\n")
    monkeypatch.syspath_prepend(str(site))
    assert ("probe", "probe_module") in installed.entry_points()
    # the same folder, changed: a package removed from it
    (info / "entry_points.txt").unlink()
    (info / "METADATA").unlink()
    info.rmdir()
    os.utime(site, ns=(1, 1))  # (a folder's time moves when an entry goes; set it, as a clock may not tick)
    assert ("probe", "probe_module") not in installed.entry_points()


@pytest.mark.parametrize(
    "content",
    [
        "",
        "{",
        "[1, 2]",
        '[{"stamp": "x"}]',
        '{"stamp": []}',
        '[{"stamp": [], "versions": {}, "entry_points": [[1, 2]]}]',
    ],
)
def test_a_damaged_cache_is_read_again(cache: Path, content: str) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_text(content, encoding="utf-8")
    assert installed.version("mcp") == metadata.version("mcp")
    assert isinstance(json.loads(cache.read_text(encoding="utf-8")), list)


def test_a_cache_that_cannot_be_written_costs_only_the_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("ARCHIVIST_CACHE_DIR", str(blocked))
    monkeypatch.setattr(installed, "_known", None)
    assert installed.version("mcp") == metadata.version("mcp")


def test_the_answers_of_many_ways_of_starting_are_kept_together(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commands, test runners and checkouts on one machine each start with a sys.path of their own:
    used in turn, each one's answers stay kept rather than pushing the others' out."""
    reads: list[int] = []
    read = installed._read
    monkeypatch.setattr(installed, "_read", lambda: reads.append(1) or read())
    folders = [tmp_path / f"start-{n}" for n in range(12)]
    path = list(sys.path)
    for _ in range(2):
        for folder in folders:
            folder.mkdir(exist_ok=True)
            os.utime(folder, ns=(1, 1))
            monkeypatch.setattr(sys, "path", [str(folder), *path])
            monkeypatch.setattr(installed, "_known", None)
            assert installed.version("mcp") == metadata.version("mcp")
    assert len(reads) == len(folders)
    assert len(json.loads(cache.read_text(encoding="utf-8"))) == len(folders)
