"""A watched source's files are listed as they always were (the same files, statuses and order:
the fingerprint of a source indexed before stays the same), links judged by where they lead."""

from __future__ import annotations

import os
from pathlib import Path

from archivist.agents import Root
from archivist.archive import sessions


def walked(path: Path) -> list[tuple[str, os.stat_result]]:
    """The listing as os.walk makes it: a folder's files in name order, then its folders."""
    root, found = Root(path), []
    for folder, subfolders, names in os.walk(path):
        subfolders.sort()
        for name in sorted(names):
            full = os.path.join(folder, name)
            try:
                found.append((full, os.stat(full) if root.allows(Path(full)) else os.lstat(full)))
            except OSError:
                continue
    return found


def test_a_folders_files_links_and_subfolders_are_listed_as_os_walk_lists_them(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not ours\n" * 40)
    source = tmp_path / "projects"
    for folder in ("b-project/subagents", "a-project", "a-project/deep/er", "Z"):
        (source / folder).mkdir(parents=True, exist_ok=True)
    for n, file in enumerate(["a-project/s1.jsonl", "a-project/S0.jsonl", "b-project/subagents/agent-1.jsonl",
                              "a-project/deep/er/x.jsonl", "Z/z.jsonl", "top.jsonl"]):  # fmt: skip
        (source / file).write_text("{}\n" * (n + 1))
    (source / "a-project" / "in.jsonl").symlink_to(source / "Z" / "z.jsonl")
    (source / "a-project" / "out.jsonl").symlink_to(outside / "secret.txt")
    (source / "a-project" / "gone.jsonl").symlink_to(source / "nowhere.jsonl")
    (source / "linked-folder").symlink_to(outside)
    listed = list(sessions._files(source))
    expected = walked(source)
    assert [(path, stat.st_size, stat.st_mtime_ns) for path, stat in listed] == [
        (path, stat.st_size, stat.st_mtime_ns) for path, stat in expected
    ]
    sizes = {Path(path).relative_to(source).as_posix(): stat.st_size for path, stat in listed}
    assert sizes["a-project/in.jsonl"] == 15 and sizes["a-project/out.jsonl"] != 360
    assert not any(name.startswith("linked-folder") for name in sizes) and "a-project/gone.jsonl" not in sizes
    assert len(sizes) == 8
    assert list(sessions._files(tmp_path / "missing")) == []
    assert [path for path, _ in sessions._files(source / "top.jsonl")] == [str(source / "top.jsonl")]
