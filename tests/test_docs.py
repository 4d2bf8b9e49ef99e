"""docs/ stays true: every file it names exists, and every module of the package is in layers.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT

DOCS = ROOT / "docs"
PACKAGE = ROOT / "archivist"
# a name in backticks that is a file or a folder: it has a suffix of one, or ends with a slash
NAMED_RE = re.compile(r"`([\w./-]+(?:\.(?:py|sql|md|json|yml|yaml|toml|txt)|/))`")
SECTION_RE = re.compile(r"^#+ .*?`(archivist/[\w/]*)`", re.MULTILINE)
PLACEHOLDER = "foo"  # the walkthroughs' example kind, which does not exist


def named_files(text: str) -> list[tuple[str, str | None]]:
    """Each file or folder a document names, with the package folder of the section it is named in."""
    found = []
    sections = [(match.start(), match[1]) for match in SECTION_RE.finditer(text)]
    for match in NAMED_RE.finditer(text):
        section = next((folder for start, folder in reversed(sections) if start < match.start()), None)
        found.append((match[1], section))
    return found


def exists(name: str, section: str | None) -> bool:
    """Whether a named file exists: from the top, the package, docs/ or its section's folder;
    a bare file name, anywhere in the package (``catalog.py``)."""
    places = [ROOT, PACKAGE, DOCS] + ([ROOT / section] if section else [])
    if any((place / name).exists() for place in places):
        return True
    return "/" not in name and any(PACKAGE.rglob(name))


@pytest.mark.parametrize("document", sorted(DOCS.glob("*.md")), ids=lambda path: path.name)
def test_every_file_a_document_names_exists(document: Path) -> None:
    text = document.read_text(encoding="utf-8")
    named = [(name, section) for name, section in named_files(text) if PLACEHOLDER not in name]
    assert named, f"{document.name} names no file"
    missing = [name for name, section in named if not exists(name, section)]
    assert missing == [], f"{document.name} names files that do not exist"
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert [link for link in links if not (document.parent / link).exists()] == []


def test_every_module_of_the_package_is_in_the_layers() -> None:
    text = (DOCS / "layers.md").read_text(encoding="utf-8")
    sections = {
        match[1].rstrip("/"): text[match.end() : (following.start() if following else len(text))]
        for match, following in zip(
            list(SECTION_RE.finditer(text)), [*list(SECTION_RE.finditer(text))[1:], None], strict=True
        )
    }
    bottom = text[text.index("### The modules at the bottom") :]
    missing = []
    for module in sorted(PACKAGE.rglob("*.py")):
        relative = module.relative_to(PACKAGE)
        if relative.parts[:2] == ("agents", "kinds"):
            continue  # the built-in kinds: found by listing the folder (`kinds/` in the agents' table)
        code = module.read_text(encoding="utf-8")
        if module.name == "__init__.py" and not re.search(r"^(?:async def|def|class) ", code, re.MULTILINE):
            continue  # a package's names, re-exported: nothing of its own to describe
        if len(relative.parts) == 1:
            if module.name != "__init__.py" and f"`{module.name}`" not in bottom:
                missing.append(str(relative))
            continue
        section = sections.get("archivist/" + "/".join(relative.parts[:-1]), "")
        if f"`{module.name}`" not in section:
            missing.append(str(relative))
    assert missing == [], "modules layers.md does not describe"


def test_the_layers_are_the_import_contracts() -> None:
    """layers.md's picture of the layers is pyproject.toml's contract, in the same order."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    contract = re.search(r"layers = \[(.*?)\]", pyproject, re.DOTALL)
    assert contract
    declared = [[name.strip() for name in layer.split("|")] for layer in re.findall(r'"([^"]+)"', contract[1])]
    picture = (DOCS / "layers.md").read_text(encoding="utf-8").split("```")[1]
    drawn = []
    for line in picture.strip().splitlines():
        names = line.split("  ")[0].strip().split(" | ")
        first = names[0]
        drawn.append([first, *(first.rsplit(".", 1)[0] + name if name.startswith(".") else name for name in names[1:])])
    assert drawn == declared


def test_no_comment_cites_a_contract_outside_the_repository() -> None:
    cited = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("archivist", "tests", "bench")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in (".py", ".sql", ".html", ".md") and path.is_file()
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if chr(167) in line  # the section sign
    ]
    assert cited == []
