"""What a kind's source holds and what its archive keeps: every string of the source, by key path, found in
the archive, declared dropped on purpose in the kind's ``[dropped]`` table, or lost.

A source's strings are its files' string leaves: a JSON or JSONL file's string values (a string that is
itself JSON walked too), a SQLite store's text values by ``table.column``, a text file's lines. Each is
named ``file:key.path`` (``events.jsonl:data.content``, ``state.vscdb:ItemTable.value>tabs[].title``),
the name the ``[dropped]`` patterns (``fnmatch``) are matched against.
"""

from __future__ import annotations

import datetime
import functools
import json
import re
import sqlite3
import tomllib
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archivist.agents import registry
from archivist.archive import packed
from archivist.archive.indexer import index_workspace
from archivist.secrets import Masker
from archivist.workspace import archive_path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "sample-agent-logs"
KINDS_FOLDER = ROOT / "archivist" / "agents"  # a folder per kind built in, each with its kind.toml
MASKED = re.compile(r"\[secret masked: [^\]]*\]")
SQLITE_MAGIC = b"SQLite format 3\x00"
ISO_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}")
FILE_URI = "file://"  # a file's URI: the archive keeps its path
TIME_FORMS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S")
WHOLE_WORD_BELOW = 40  # a shorter string is found only as whole words ("say" is not found in "essay")
SIDE_FILES = ("-shm", "-wal", "-journal")  # a SQLite store's own files beside it, read through the store
MARKUP = re.compile(r"^(?:#+|>|[-*]|\d+\.)\s+")  # a Markdown line's heading, quote or list mark
FENCE = re.compile(r"^(?:`{3,}|~{3,})$")  # a Markdown code block's bare fence line, no text of its own


@dataclass(frozen=True)
class Held:
    """One string a source holds: where (``file:key.path``) and what."""

    where: str
    text: str


def samples() -> dict[str, Path]:
    """Each built-in kind's sample source."""
    kinds = registry.kinds(registry.manager(entry_points=False))
    return {name: LOGS / kind.sample for name, kind in kinds.items() if kind.sample}


def dropped(kind: str) -> dict[str, str]:
    """A kind's ``[dropped]`` table: each key-path pattern left out on purpose, and why."""
    (path,) = [path for path in KINDS_FOLDER.glob("*/kind.toml") if _declared_name(path) == kind]
    table = tomllib.loads(path.read_text(encoding="utf-8")).get("dropped", {})
    if not isinstance(table, dict) or not all(isinstance(reason, str) and reason for reason in table.values()):
        raise ValueError(
            f"{path.parent.name}/{path.name}: [dropped] is a table of key-path patterns, each with its reason"
        )
    return table


def _declared_name(path: Path) -> str:
    return str(tomllib.loads(path.read_text(encoding="utf-8")).get("name", ""))


def index_sources(workspace: Path, sources: dict[str, Path]) -> Path:
    """An archive of ``sources`` (kind: path) alone, indexed by the real indexer beside an empty workspace."""
    workspace.mkdir(parents=True, exist_ok=True)
    index_workspace(workspace, log_sources=[(kind, path.resolve()) for kind, path in sources.items()])
    return archive_path(workspace)


# --- what a source holds ---------------------------------------------------------------------


def held(source: Path) -> Iterator[Held]:
    """Every string the files of ``source`` (a file or a folder) hold."""
    files = [source] if source.is_file() else sorted(path for path in source.rglob("*") if path.is_file())
    for file in files:
        if file.name == ".gitignore" or file.name.endswith(SIDE_FILES):
            continue
        yield from file_strings(file)


def file_strings(file: Path) -> Iterator[Held]:
    """The strings of one file: a SQLite store's, a JSON or JSONL file's, or a text file's lines."""
    data = file.read_bytes()
    if data.startswith(SQLITE_MAGIC):
        yield from store_strings(file)
        return
    text = data.decode("utf-8", errors="replace")
    try:
        value = json.loads(text)
    except ValueError:
        lines = [line for line in text.splitlines() if line.strip()]
        values = [_json(line) for line in lines]
        if lines and all(value is not None for value in values):
            for value in values:
                yield from value_strings(value, f"{file.name}:")
            return
        for line in lines:
            yield Held(f"{file.name}:line", line)
        return
    yield from value_strings(value, f"{file.name}:")


def _json(text: str) -> Any:
    """``text`` read as JSON, when it is an object or a list; else None."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None


def value_strings(value: Any, where: str) -> Iterator[Held]:
    """The string leaves of a JSON value, each named by its key path; a string holding JSON walked too."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from value_strings(item, f"{where}{'' if where.endswith((':', '>')) else '.'}{key}")
    elif isinstance(value, list):
        for item in value:
            yield from value_strings(item, f"{where}[]")
    elif isinstance(value, str):
        inner = _json(value)
        if inner is not None:
            yield from value_strings(inner, f"{where}>")
        elif value.strip():
            yield Held(where, value)


def store_strings(file: Path) -> Iterator[Held]:
    """The text values of every table of a SQLite store, each named ``file:table.column``."""
    with sqlite3.connect(f"file:{file}?mode=ro", uri=True) as db:
        tables = [
            name
            for (name,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        for table in tables:
            try:
                cursor = db.execute(f'SELECT * FROM "{table}"')
            except sqlite3.Error:
                continue
            columns = [column[0] for column in cursor.description]
            for row in cursor:
                for column, cell in zip(columns, row, strict=True):
                    if isinstance(cell, bytes):
                        try:
                            cell = cell.decode("utf-8")
                        except UnicodeDecodeError:
                            continue
                    if isinstance(cell, str):
                        yield from value_strings(cell, f"{file.name}:{table}.{column}")
    db.close()


# --- what the archive keeps ------------------------------------------------------------------


def kept(archive: Path, kind: str) -> str:
    """Every text the archive stores for a kind's sessions: their documents, messages (packed texts
    unpacked), files and problems, JSON values as their string leaves, masked secrets as one marker."""
    db = sqlite3.connect(archive)
    try:
        rows = db.execute("SELECT * FROM documents WHERE type = ? AND source LIKE 'log:%'", (kind,)).fetchall()
        rows += db.execute(
            "SELECT m.* FROM messages m JOIN documents d ON d.id = m.document_id "
            "WHERE d.type = ? AND d.source LIKE 'log:%'",
            (kind,),
        ).fetchall()
        rows += db.execute("SELECT * FROM problems").fetchall()
    finally:
        db.close()
    texts: list[str] = []
    for row in rows:
        for cell in map(packed.unpacked, row):
            if isinstance(cell, str):
                texts.append(cell)
                inner = _json(cell)
                if inner is not None:
                    texts.extend(held.text for held in value_strings(inner, ""))
    return MASKED.sub("[secret masked]", "\n".join(texts))


def retained(text: str, archive_text: str, masker: Masker) -> bool:
    """Whether ``text`` stands in the archive's texts: whole, or each of its lines but a code block's bare
    fences; a time as the archive writes it (to the second, in UTC)."""
    if (instant := _instant(text)) is not None:
        return any(instant.strftime(form) in archive_text for form in TIME_FORMS)
    if text.startswith(FILE_URI):
        text = urllib.parse.unquote(text.removeprefix(FILE_URI))
    masked = MASKED.sub("[secret masked]", masker(text.strip()))
    if stands_in(masked, archive_text):
        return True
    lines = [MARKUP.sub("", line.strip()) for line in masked.splitlines() if line.strip()]
    lines = [line for line in lines if not FENCE.fullmatch(line)]
    return bool(lines) and all(stands_in(line, archive_text) for line in lines)


def _instant(text: str) -> datetime.datetime | None:
    """``text`` read as an ISO 8601 date and time (UTC when it names no zone), or None."""
    if not ISO_TIME.match(text):
        return None
    try:
        instant = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if instant.tzinfo is None:
        return instant
    return instant.astimezone(datetime.UTC)


def stands_in(text: str, archive_text: str) -> bool:
    """Whether ``text`` occurs in the archive's texts; a short one as a whole word, not inside another."""
    if len(text) >= WHOLE_WORD_BELOW:
        return text in archive_text
    return re.search(rf"(?<!\w){re.escape(text)}(?!\w)", archive_text) is not None


def declared(string: Held, patterns: dict[str, str]) -> str | None:
    """The pattern of ``patterns`` that names the string: its place (``file:key.path``), or its place and
    text (``file:line=# aider chat started at *``); or None."""
    named = (string.where, f"{string.where}={string.text}")
    return next((pattern for pattern in patterns if any(_matcher(pattern).fullmatch(name) for name in named)), None)


@functools.cache
def _matcher(pattern: str) -> re.Pattern[str]:
    """A pattern's regular expression: ``*`` any run of characters, ``?`` one, all else as written (``[]`` too)."""
    return re.compile(re.escape(pattern).replace(r"\*", ".*").replace(r"\?", "."), re.DOTALL)


@dataclass
class Tally:
    """A kind's sample measured: its strings' bytes retained, dropped on purpose and lost, and what was lost."""

    retained: int = 0
    dropped: int = 0
    lost: int = 0
    lost_strings: list[Held] | None = None

    @property
    def total(self) -> int:
        return self.retained + self.dropped + self.lost

    def share(self) -> float:
        """The share of the content bytes retained, in percent."""
        return 100 * self.retained / self.total if self.total else 100.0


def measure(strings: Iterator[Held], archive_text: str, patterns: dict[str, str]) -> Tally:
    """Each string retained, declared dropped, or lost, counted in UTF-8 bytes."""
    tally = Tally(lost_strings=[])
    masker = Masker()
    for string in strings:
        size = len(string.text.encode("utf-8"))
        if retained(string.text, archive_text, masker):
            tally.retained += size
        elif declared(string, patterns):
            tally.dropped += size
        else:
            tally.lost += size
            tally.lost_strings.append(string)  # type: ignore[union-attr]
    return tally


# --- a sample's strings made anew ------------------------------------------------------------


def rewritten(value: Any, place: str, pattern: str, texts: Iterator[str], made: list[str]) -> Any:
    """A JSON value with each string whose key path (``place`` its own) matches ``pattern`` replaced by the
    next of ``texts``, each replacement added to ``made``."""
    if isinstance(value, dict):
        joiner = "" if place.endswith(":") else "."
        return {key: rewritten(item, f"{place}{joiner}{key}", pattern, texts, made) for key, item in value.items()}
    if isinstance(value, list):
        return [rewritten(item, f"{place}[]", pattern, texts, made) for item in value]
    if isinstance(value, str) and _matcher(pattern).fullmatch(place) and value.strip():
        made.append(next(texts))
        return made[-1]
    return value


def rewrite_lines(file: Path, patterns: tuple[str, ...], texts: Iterator[str]) -> list[str]:
    """A JSONL file's strings at ``patterns`` replaced by ``texts`` in place; the strings written."""
    made: list[str] = []
    lines = []
    for line in file.read_text(encoding="utf-8").splitlines():
        value = json.loads(line)
        for pattern in patterns:
            value = rewritten(value, f"{file.name}:", pattern, texts, made)
        lines.append(json.dumps(value))
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return made
