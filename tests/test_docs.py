"""docs/ and the README stay true: every file they name exists, every name of the package they
mention is defined where they say, every code block runs in a test (tests/test_docs_examples.py),
parses, or says why not, and every module of the package is in layers.md."""

from __future__ import annotations

import ast
import functools
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import doc_blocks
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


# the files the reference names that live on a user's machine, never in the repository
ELSEWHERE = {
    "settings.json": "a deployment's configuration folder",
    "static/": "a deployment's configuration folder",
    ".mcp.json": "a project's Claude Code servers",
    "claude_desktop_config.json": "Claude Desktop's configuration",
    ".cursor/mcp.json": "Cursor's configuration",
    "mcp.json": "Cursor's configuration",
    "mcp-listing.json": "the cache folder",
    "installed.json": "the cache folder",
    "kinds-<hash>.json": "the cache folder",
    "2025-06-24_10-17-43_slug.md": "a file name a date is read from",
    "2026-01-23_17-24-15Z-slug.md": "a file name a date is read from",
    "2023-01/jan-31.md": "a file name a date is read from",
    "2023/CG-02-28.md": "a file name a date is read from",
}
SAMPLES = (ROOT / "sample-workspace", ROOT / "sample-agent-logs")


def exists(name: str, section: str | None) -> bool:
    """Whether a named file exists: from the top, the package, docs/, its section's folder or the
    sample workspace; a bare file name, anywhere in the package (``catalog.py``); a file or folder
    of an agent's logs, in its kind's sample (``.specstory/history/``); or one of the files a
    user's machine holds (ELSEWHERE)."""
    places = [ROOT, PACKAGE, DOCS, SAMPLES[0]] + ([ROOT / section] if section else [])
    if name in ELSEWHERE or any((place / name).exists() for place in places):
        return True
    in_logs = any(path.as_posix().endswith("/" + name.rstrip("/")) for path in SAMPLES[1].rglob("*"))
    return in_logs or ("/" not in name and any(PACKAGE.rglob(name)))


@pytest.mark.parametrize("document", sorted(DOCS.glob("*.md")), ids=lambda path: path.name)
def test_every_file_a_document_names_exists(document: Path) -> None:
    text = document.read_text(encoding="utf-8")
    named = [(name, section) for name, section in named_files(text) if PLACEHOLDER not in name]
    assert named, f"{document.name} names no file"
    missing = [name for name, section in named if not exists(name, section)]
    assert missing == [], f"{document.name} names files that do not exist"
    links = [link for link in re.findall(r"\]\(([^)#]+)\)", text) if not link.startswith("https://")]
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


OUT = ROOT / "bench" / "out"  # what the benches write and install (peers' environments too): not the project's


def test_no_comment_cites_a_contract_outside_the_repository() -> None:
    cited = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("archivist", "tests", "bench")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in (".py", ".sql", ".html", ".md") and path.is_file() and OUT not in path.parents
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
        if chr(167) in line  # the section sign
    ]
    assert cited == []


# --- every name a document mentions exists where it says -----------------------------------

TICKED_RE = re.compile(r"`([^`\n]+)`")
CALL_RE = re.compile(r"^((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)\(")
MODULE_PATH_RE = re.compile(r"^archivist(?:\.\w+)+$")
CONSTANT_RE = re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]+$|^[A-Z]{3,}$")
DATE_FORMAT_RE = re.compile(r"^[YMDHS_]+$")  # YYYYMMDD, YYYY_MM_DD: a format, not a name
ATTRIBUTE_RE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
# "`NAME` in `module.py`": the module a document says a name is defined in
PLACED_RE = re.compile(r"`([A-Za-z_]\w*)(?:\(\))?`\s+(?:in|of|from)\s+`([\w/]+\.py)`")
FILE_SUFFIXES = {"db", "json", "yaml", "yml", "toml", "md", "py", "sql", "txt", "sqlite3", "vscdb", "ipynb", "html"}


@dataclass
class Module:
    """A module of the package as its source defines it: its names (those it imports included),
    the names it defines itself, and each class's members."""

    path: Path
    names: set[str] = field(default_factory=set)
    defines: set[str] = field(default_factory=set)
    classes: dict[str, set[str]] = field(default_factory=dict)


@dataclass
class Package:
    """What the package's source defines, read from the tree as it is (never imported)."""

    modules: dict[str, Module]
    strings: set[str]

    def by_name(self, name: str) -> list[Module]:
        """The modules of the package a short name may mean, among its top two levels: ``vocabulary``
        is archivist/vocabulary.py and archivist/documents/vocabulary.py, ``agents`` archivist/agents."""
        return [
            module
            for dotted, module in self.modules.items()
            if dotted.startswith("archivist.") and dotted.count(".") <= 2 and dotted.rsplit(".", 1)[-1] == name
        ]

    def members(self, class_name: str) -> list[set[str]]:
        return [module.classes[class_name] for module in self.modules.values() if class_name in module.classes]

    def defined(self, name: str) -> bool:
        return any(name in module.names or self.members(name) for module in self.modules.values()) or any(
            name in members for module in self.modules.values() for members in module.classes.values()
        )

    def in_file(self, name: str, file: str) -> bool:
        """Whether ``name`` is defined in the module a document names by its path (not imported there)."""
        places = [
            module
            for module in self.modules.values()
            if module.path.as_posix().endswith("/" + file.removeprefix("archivist/"))
        ]
        return any(name in module.defines for module in places)


def _read_module(path: Path) -> Module:
    module = Module(path)
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        module.names.update(_bound(node))
        if not isinstance(node, ast.Import | ast.ImportFrom):
            module.defines.update(_bound(node))
        if isinstance(node, ast.ClassDef):
            module.classes[node.name] = {name for child in node.body for name in _bound(child)}
    return module


def _bound(node: ast.stmt) -> set[str]:
    """The names a statement of a module or a class body binds."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {name.id for target in node.targets for name in ast.walk(target) if isinstance(name, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    if isinstance(node, ast.If | ast.Try):
        return {name for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt) for name in _bound(child)}
    return set()


@functools.cache
def package() -> Package:
    """The package's modules, and the tests' and benchmarks' (a document may name their constants)."""
    modules, strings = {}, set()
    for path in sorted(path for folder in (PACKAGE, ROOT / "tests", ROOT / "bench") for path in folder.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        dotted = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[dotted] = _read_module(path)
        if path.is_relative_to(PACKAGE):  # the words the package spells: tools, SQL functions, codes
            tree = ast.parse(path.read_text(encoding="utf-8"))
            strings.update(
                node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            )
    return Package(modules, strings)


def resolves(mention: str) -> bool:
    """Whether a name a document mentions is in the package: a module path, a module's or a
    class's attribute (``vocabulary.expressions``, ``Kind.from_table``), or a name it defines or
    spells (a function, a constant, an MCP tool, an SQL function, an error code)."""
    found = package()
    if MODULE_PATH_RE.match(mention):
        head, _, last = mention.rpartition(".")
        return mention in found.modules or (head in found.modules and last in found.modules[head].names)
    first, *rest = mention.split(".")
    if not rest:
        return found.defined(mention) or mention in found.strings
    owners = [module.names | set(module.classes) for module in found.by_name(first)] + found.members(first)
    if len(rest) == 2:
        owners = [
            members
            for module in found.by_name(first)
            if rest[0] in module.classes
            for members in [module.classes[rest[0]]]
        ]
    return any(rest[-1] in names for names in owners)


def mentions(document: Path) -> list[str]:
    """The names of the package a document mentions in backticks outside its code blocks:
    ``f()`` and ``module.f()``, ``archivist.x.y``, ``CONSTANTS`` and ``module.name`` where
    ``module`` is a module of the package or ``Class.name`` where it is one of its classes."""
    found = package()
    named = []
    for match in TICKED_RE.finditer(doc_blocks.prose(document)):
        text = match[1].strip()
        if call := CALL_RE.match(text):
            named.append(call[1])
        elif MODULE_PATH_RE.match(text) or (CONSTANT_RE.match(text) and not DATE_FORMAT_RE.match(text)):
            named.append(text)
        elif ATTRIBUTE_RE.match(text) and text.rsplit(".", 1)[-1] not in FILE_SUFFIXES:
            first = text.split(".")[0]
            if found.by_name(first) or found.members(first):
                named.append(text)
    return [name for name in named if PLACEHOLDER not in name]


@pytest.mark.parametrize("document", doc_blocks.DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_name_a_document_mentions_is_in_the_package(document: Path) -> None:
    assert [name for name in mentions(document) if not resolves(name)] == []


@pytest.mark.parametrize("document", doc_blocks.DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_a_name_said_to_be_in_a_module_is_defined_there(document: Path) -> None:
    text = doc_blocks.prose(document)
    assert [f"{name} in {file}" for name, file in PLACED_RE.findall(text) if not package().in_file(name, file)] == []


def test_the_names_checks_fail_on_a_name_that_is_not_there() -> None:
    assert resolves("agents.call_input") and resolves("archivist.queries.diffs") and resolves("KEYS")
    assert not resolves("agents.no_such_function") and not resolves("archivist.queries.no_such_module")
    assert not resolves("NO_SUCH_CONSTANT") and not resolves("vocabulary.Expressions.no_such_member")
    assert package().in_file("PARSER_VERSION", "archivist/documents/parsing.py")
    assert not package().in_file("LAYOUT", "archivist/documents/parsing.py")


# --- every code block runs in a test, parses, or says why not -------------------------------


@pytest.mark.parametrize("block", doc_blocks.all_blocks(), ids=lambda block: block.name)
def test_every_code_block_is_checked_or_says_why_not(block: doc_blocks.Block) -> None:
    if block.not_run is not None or block.language not in doc_blocks.CHECKED:
        return  # a picture, an output or a fragment shown, or a block that says why no test runs it
    if block.language == "json":
        json.loads(block.body)
    elif block.language == "python":
        ast.parse(block.body)
    elif block.language == "toml":
        tomllib.loads(block.body)
    else:
        unrun = [line for line in doc_blocks.commands(block) if not examples_cover(line)]
        assert unrun == [], f"{block.name}: commands no test runs; mark the block <!-- not run: why -->"


def examples_cover(line: str) -> bool:
    """Whether tests/test_docs_examples.py runs a shell line (an ``archivist`` command), or the
    line runs one of the repository's generators (a script of tests/ or a module of the package
    that rewrites a generated file; the test named beside it fails while that file differs)."""
    from test_docs_examples import runs

    if runs(line):
        return True
    script = re.fullmatch(r"\.venv/bin/python (tests/\w+\.py)", line)
    module = re.fullmatch(r"\.venv/bin/python -m (archivist(?:\.\w+)+)", line)
    return bool(script and (ROOT / script[1]).is_file()) or bool(module and module[1] in package().modules)


# --- the README: short, and a way into every document -----------------------------------------

README_MOST_LINES = 250
LINK_RE = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def linked(document: Path) -> set[Path]:
    """The files of the repository a document links to."""
    links = [link for link in LINK_RE.findall(document.read_text(encoding="utf-8")) if "://" not in link]
    return {(document.parent / link).resolve() for link in links}


def test_the_readme_is_short_and_every_link_of_it_leads_to_a_file() -> None:
    readme = ROOT / "README.md"
    assert len(readme.read_text(encoding="utf-8").splitlines()) <= README_MOST_LINES
    assert [path for path in linked(readme) if not path.exists()] == []


def test_every_document_is_reached_from_the_readme() -> None:
    reached, todo = set(), [(ROOT / "README.md").resolve()]
    while todo:
        document = todo.pop()
        if document in reached:
            continue
        reached.add(document)
        todo += [path for path in linked(document) if path.suffix == ".md" and path.is_file()]
    assert [path.name for path in sorted(DOCS.glob("*.md")) if path.resolve() not in reached] == []
