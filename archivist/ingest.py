"""Walking a workspace: which files make which documents, and what each one says.

A *source* is the unit that is re-read when any of its files change: a
conversation folder, or one file. Parsing a source yields document rows; a
problem with a file never raises, it is reported as a ``Problem``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import yaml

from . import dates

TEXT_SUFFIXES = {".md", ".markdown", ".txt"}
MARKDOWN_SUFFIXES = {".md", ".markdown"}
IGNORED_DIRS = {".archivist", ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__"}
MAX_FILE_BYTES = 2 * 1024 * 1024  # one document's text
MAX_DATA_FILE_BYTES = 128 * 1024 * 1024  # a .jsonl or .csv file holds many documents
DATA_SUFFIXES = {".jsonl", ".csv"}
CONVERSATION_TYPES = (
    "brainstorm",
    "debug",
    "plan",
    "review",
    "research",
    "design",
    "implement",
    "refactor",
    "retro",
    "spike",
    "support",
    "learn",
)
_NUMBERED_SLUG_RE = re.compile(r"^\d{1,4}[-_].+")
_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
_HEADING_RE = re.compile(r"^#{1,3}[ \t]+(.+?)[ \t#]*$", re.M)


@dataclass
class FileInfo:
    path: str  # relative to the workspace, with forward slashes
    size: int
    mtime_ns: int


@dataclass
class Problem:
    path: str
    status: str  # "skipped" (nothing indexed) or "degraded" (indexed with a caveat)
    reason: str


@dataclass
class Source:
    path: str
    kind: str
    files: list[FileInfo] = field(default_factory=list)
    reports_dir: str = "reports"


@dataclass
class Parsed:
    documents: list[dict[str, Any]]
    problems: list[Problem]
    content_hash: str


# --- walking -----------------------------------------------------------------


def walk(root: Path, exclude: set[Path] | None = None) -> tuple[list[FileInfo], list[Problem]]:
    """Every regular file under ``root`` (symlinks leaving it are refused)."""
    files: list[FileInfo] = []
    problems: list[Problem] = []
    resolved_root = root.resolve()
    exclude = {p.resolve() for p in (exclude or set())}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if d not in IGNORED_DIRS and not os.path.islink(os.path.join(dirpath, d))
        )
        for name in sorted(filenames):
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            info = _stat(full, rel, resolved_root, exclude, problems)
            if info is not None:
                files.append(info)
    return files, problems


def _stat(full: Path, rel: str, root: Path, exclude: set[Path], problems: list[Problem]) -> FileInfo | None:
    if full.is_symlink():
        try:
            target = full.resolve(strict=True)
        except (OSError, RuntimeError):
            problems.append(Problem(rel, "skipped", "broken symlink"))
            return None
        if not target.is_relative_to(root):
            problems.append(Problem(rel, "skipped", "symlink points outside the workspace"))
            return None
    if full.resolve() in exclude:
        return None
    try:
        stat = full.stat()
    except OSError as error:
        problems.append(Problem(rel, "skipped", f"unreadable: {error.strerror or error}"))
        return None
    if not full.is_file():
        return None
    return FileInfo(rel, stat.st_size, stat.st_mtime_ns)


# --- classifying -------------------------------------------------------------


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""


def is_date_folder(name: str) -> bool:
    return bool(dates.DAY_FOLDER_RE.match(name) or dates.MONTH_FOLDER_RE.match(name))


def conversation_unit(parts: list[str]) -> str | None:
    """The conversation a path belongs to, as the path of its folder or single file.

    ``conversations/<date>/<NNN-slug>/…`` and ``<type>/<date>/<NNN-slug>/…`` (a
    known type, or any folder whose entries are numbered), or a single markdown
    file directly inside such a date folder.
    """
    if len(parts) < 3 or not is_date_folder(parts[1]):
        return None
    top = parts[0]
    typed = top == "conversations" or top.lower() in CONVERSATION_TYPES
    if len(parts) == 3:
        if _suffix(parts[2]) in MARKDOWN_SUFFIXES and (typed or _NUMBERED_SLUG_RE.match(parts[2])):
            return "/".join(parts)
        return None
    if typed or _NUMBERED_SLUG_RE.match(parts[2]):
        return "/".join(parts[:3])
    return None


def classify(path: str, reports_dir: str = "reports") -> tuple[str, str] | None:
    """(source path, kind) for a file, or None when it holds no document."""
    parts = path.split("/")
    suffix = _suffix(path)
    unit = conversation_unit(parts)
    if unit is not None:
        return (unit, "conversation") if suffix in MARKDOWN_SUFFIXES else None
    report_parts = reports_dir.strip("/").split("/")
    depth = len(report_parts)
    if parts[:depth] == report_parts and len(parts) >= depth + 2 and suffix in MARKDOWN_SUFFIXES:
        return path, "report"
    if parts[0] == "memories" and suffix in {".jsonl", ".md", ".markdown"}:
        return path, "memory"
    if parts[0] == "records" and suffix in {".jsonl", ".csv"}:
        return path, "record"
    if suffix in TEXT_SUFFIXES:
        return path, "note"
    return None


def group_sources(files: list[FileInfo], reports_dir: str = "reports") -> tuple[dict[str, Source], list[Problem]]:
    sources: dict[str, Source] = {}
    problems: list[Problem] = []
    for info in files:
        found = classify(info.path, reports_dir)
        if found is None:
            problems.append(Problem(info.path, "skipped", f"unsupported file type ({_suffix(info.path) or 'no extension'})"))
            continue
        path, kind = found
        source = sources.setdefault(path, Source(path, kind, reports_dir=reports_dir))
        source.files.append(info)
    return sources, problems


# --- reading -----------------------------------------------------------------


def read_text(root: Path, info: FileInfo, problems: list[Problem]) -> str | None:
    """The file's text, or None (with a problem recorded) when it has none to give."""
    cap = MAX_DATA_FILE_BYTES if _suffix(info.path) in DATA_SUFFIXES else MAX_FILE_BYTES
    try:
        with open(root / info.path, "rb") as handle:
            raw = handle.read(cap + 1)
    except OSError as error:
        problems.append(Problem(info.path, "skipped", f"unreadable: {error.strerror or error}"))
        return None
    if not raw.strip():
        problems.append(Problem(info.path, "skipped", "empty file"))
        return None
    if b"\x00" in raw[:8192]:
        problems.append(Problem(info.path, "skipped", "binary file"))
        return None
    truncated = len(raw) > cap
    raw = raw[:cap]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        if truncated and error.start >= len(raw) - 4:
            text = raw[: error.start].decode("utf-8", errors="replace")
        else:
            text = raw.decode("utf-8", errors="replace")
            problems.append(Problem(info.path, "degraded", "not valid UTF-8: decoded with replacement characters"))
    if truncated:
        problems.append(
            Problem(info.path, "degraded", f"larger than {cap // 2**20} MiB: only the first {cap // 2**20} MiB are indexed")
        )
    return text.lstrip("\ufeff")


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    match = _FRONT_MATTER_RE.match(text)
    if not match:
        return {}, text
    try:
        meta = yaml.safe_load(match[1])
    except yaml.YAMLError:
        return {}, text
    if not isinstance(meta, dict):
        return {}, text
    return meta, text[match.end():]


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalize_tags(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        items: list[Any] = re.split(r"[,\s]+", value)
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = [value]
    tags: list[str] = []
    for item in items:
        tag = str(item).strip().lstrip("#").lower()
        if tag and tag not in tags:
            tags.append(tag)
    return tags


def first_heading(text: str) -> str | None:
    match = _HEADING_RE.search(text)
    return match[1].strip() if match else None


def humanize(slug: str) -> str:
    stem = slug.rsplit(".", 1)[0] if _suffix(slug) in TEXT_SUFFIXES else slug
    stem = re.sub(r"^\d{1,4}[-_]", "", stem)
    words = re.sub(r"[-_]+", " ", stem).strip()
    return words[:1].upper() + words[1:] if words else slug


def _type_from_slug(slug: str) -> str | None:
    words = re.split(r"[-_\s.]+", slug.lower())
    for word in words:
        for known in CONVERSATION_TYPES:
            if word == known or (word.startswith(known) and word[len(known):] in {"s", "ed", "ing", "ging", "ning", "er", "ers"}):
                return known
    return None


def filter_tokens(document: dict[str, Any]) -> str:
    """Words for the FTS ``filter_tokens`` column, so a MATCH can filter as it searches.

    Every combination of a prefix (none, ``k<kind>``, ``t<hex of type>``, both) and
    a date (none, ``y<YYYY>``, ``m<YYYYMM>``, ``d<YYYYMMDD>`` for dates known to
    the day) is one word, e.g. ``krecordt627567m202405`` for a bug of May 2024;
    then ``p<product_id>`` and ``g<hex of tag>``. A filter on kind, type and date
    is then one rare word instead of three common ones, which matters twice: the
    FTS engine intersects fewer and shorter lists, and BM25 counts the documents
    of every word in a query, filters included. Hex keeps any type or tag a single
    exact word; SQL builds the same with ``hex()``.
    """
    kind = f"k{document['kind']}"
    prefixes = [kind]
    if document.get("type"):
        typed = "t" + str(document["type"]).encode("utf-8").hex()
        prefixes += [typed, kind + typed]
    dates_ = [""]
    if document.get("month"):
        dates_ += ["y" + document["month"][:4], "m" + document["month"].replace("-", "")]
    if document.get("day"):
        dates_.append("d" + document["day"].replace("-", ""))
    tokens = [prefix + date for prefix in ["", *prefixes] for date in dates_ if prefix + date]
    if document.get("product_id") is not None:
        tokens.append(f"p{document['product_id']}")
    tokens.extend("g" + tag.encode("utf-8").hex() for tag in document.get("tags") or [])
    return " ".join(tokens)


# --- parsing -----------------------------------------------------------------


def parse(root: Path, source: Source) -> Parsed:
    parser = {
        "conversation": _parse_conversation,
        "report": _parse_report,
        "memory": _parse_memory,
        "record": _parse_records,
        "note": _parse_note,
    }[source.kind]
    problems: list[Problem] = []
    texts = []
    for info in sorted(source.files, key=lambda f: f.path):
        text = read_text(root, info, problems)
        if text is not None:
            texts.append((info, text))
    content_hash = sha256("\x00".join(f"{info.path}\x00{text}" for info, text in texts))
    documents = parser(source, texts, problems) if texts else []
    for document in documents:
        document.setdefault("source", source.path)
        document.setdefault("kind", source.kind)
        document["filter_tokens"] = filter_tokens(document)
        document.setdefault("content_hash", sha256(f"{document.get('title') or ''}\x00{document.get('body') or ''}"))
        document["tags"] = json.dumps(document.get("tags") or [])
        document["extra"] = json.dumps(document.get("extra") or {}, default=str, ensure_ascii=False)
    return Parsed(documents, problems, content_hash)


def _markdown_doc(text: str, fallback_title: str) -> tuple[dict[str, Any], dict[str, Any]]:
    meta, body = split_front_matter(text)
    title = meta.get("title") or first_heading(body) or fallback_title
    return meta, {"title": str(title).strip(), "body": body.strip(), "tags": normalize_tags(meta.get("tags"))}


def _dated(document: dict[str, Any], *candidates: dates.DocDate | None) -> dict[str, Any]:
    found = next((c for c in candidates if c is not None), None)
    document.update(found.columns() if found else dates.NO_DATE_COLUMNS)
    return document


def _parse_conversation(source: Source, texts: list[tuple[FileInfo, str]], problems: list[Problem]) -> list[dict[str, Any]]:
    parts = source.path.split("/")
    slug = parts[2]
    metas: list[dict[str, Any]] = []
    bodies: list[str] = []
    for _info, text in texts:
        meta, body = split_front_matter(text)
        metas.append(meta)
        bodies.append(body.strip())
    meta = next((m for m in metas if m), {})
    body = "\n\n".join(b for b in bodies if b)
    folder_type = None if parts[0] == "conversations" else parts[0].lower()
    document = {
        "key": f"conversation:{source.path}",
        "path": source.path,
        "name": slug,
        "type": meta.get("type") or folder_type or _type_from_slug(slug),
        "title": str(meta.get("title") or first_heading(body) or humanize(slug)).strip(),
        "body": body,
        "tags": normalize_tags(meta.get("tags")),
        "extra": {"files": [info.path for info, _ in texts]},
    }
    single_file = source.files[0].path == source.path
    folder_date = dates.from_path(source.path) if single_file else dates.from_folders(parts[:2])
    return [_dated(document, dates.from_front_matter(meta), folder_date)]


def _parse_report(source: Source, texts: list[tuple[FileInfo, str]], problems: list[Problem]) -> list[dict[str, Any]]:
    info, text = texts[0]
    name = info.path.rsplit("/", 1)[-1]
    depth = len(source.reports_dir.strip("/").split("/"))
    command = info.path.split("/")[depth]
    meta, fields = _markdown_doc(text, humanize(name))
    document = {
        "key": f"report:{info.path}",
        "path": info.path,
        "name": name,
        "type": command,
        **fields,
    }
    # Reports are dated by their file name (seed 001); front matter may still say more.
    return [_dated(document, dates.from_front_matter(meta), dates.from_name(name.rsplit(".", 1)[0]))]


def _parse_note(source: Source, texts: list[tuple[FileInfo, str]], problems: list[Problem]) -> list[dict[str, Any]]:
    info, text = texts[0]
    name = info.path.rsplit("/", 1)[-1]
    meta, fields = _markdown_doc(text, humanize(name))
    document = {
        "key": f"note:{info.path}",
        "path": info.path,
        "name": name,
        "type": meta.get("type"),
        **fields,
    }
    return [_dated(document, dates.from_front_matter(meta), dates.from_path(info.path))]


def _memory_row(path: str, line: int, record: dict[str, Any]) -> dict[str, Any]:
    content = str(record.get("content") or record.get("text") or "").strip()
    external_id = str(record.get("content_hash") or record.get("id") or sha256(content)[:16])
    title = str(record.get("title") or content.split("\n", 1)[0])
    document = {
        "key": f"memory:{path}#{external_id}",
        "path": path,
        "line": line,
        "name": path.rsplit("/", 1)[-1],
        "external_id": external_id,
        "type": record.get("memory_type") or record.get("type"),
        "title": title[:120],
        "body": content,
        "tags": normalize_tags(record.get("tags")),
        "extra": {k: v for k, v in record.items() if k not in {"content", "text", "tags"}},
    }
    when = next((record[k] for k in ("created_at", "timestamp", "date", "created") if record.get(k) not in (None, "")), None)
    return _dated(document, dates.from_value(when))


def _parse_memory(source: Source, texts: list[tuple[FileInfo, str]], problems: list[Problem]) -> list[dict[str, Any]]:
    info, text = texts[0]
    if _suffix(info.path) != ".jsonl":
        meta, body = split_front_matter(text)
        record = {**meta, "content": body.strip(), "title": meta.get("title") or first_heading(body)}
        if not record["title"]:
            record.pop("title")
        return _unique([_memory_row(info.path, 1, record)], info.path, problems)
    rows = [_memory_row(info.path, line, record) for line, record in _json_lines(info.path, text, problems)]
    empty = [row for row in rows if not row["body"]]
    for row in empty:
        problems.append(Problem(info.path, "degraded", f"line {row['line']}: memory has no content; skipped"))
    return _unique([row for row in rows if row["body"]], info.path, problems)


def _json_lines(path: str, text: str, problems: list[Problem]) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(Problem(path, "degraded", f"line {number}: invalid JSON ({error.msg}); line skipped"))
            continue
        if not isinstance(record, dict):
            problems.append(Problem(path, "degraded", f"line {number}: not a JSON object; line skipped"))
            continue
        yield number, record


def _record_row(path: str, line: int, record: dict[str, Any]) -> dict[str, Any]:
    entity_type = str(record.get("entity_type") or "").strip().lower() or None
    entity_id = record.get("entity_id")
    external_id = str(entity_id) if entity_id not in (None, "") else f"line-{line}"
    product_id = record.get("product_id")
    body = str(record.get("body") or record.get("description") or "").strip()
    title = str(record.get("title") or "").strip() or body.split("\n", 1)[0][:120] or f"{entity_type} {external_id}"
    document = {
        "key": f"record:{path}#{entity_type}:{external_id}",
        "path": path,
        "line": line,
        "name": path.rsplit("/", 1)[-1],
        "external_id": external_id,
        "type": entity_type,
        "title": title,
        "body": body,
        "tags": normalize_tags(record.get("tags")),
        "product_id": int(product_id) if str(product_id or "").strip().lstrip("-").isdigit() else None,
        "extra": {k: v for k, v in record.items() if k not in {"title", "body", "tags"}},
    }
    return _dated(document, dates.from_value(record.get("timestamp")))


def _parse_records(source: Source, texts: list[tuple[FileInfo, str]], problems: list[Problem]) -> list[dict[str, Any]]:
    info, text = texts[0]
    if _suffix(info.path) == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        records = [(number, row) for number, row in enumerate(reader, start=2)]
    else:
        records = list(_json_lines(info.path, text, problems))
    rows = []
    for line, record in records:
        if not record.get("entity_type"):
            problems.append(Problem(info.path, "degraded", f"line {line}: record has no entity_type; skipped"))
            continue
        rows.append(_record_row(info.path, line, record))
    return _unique(rows, info.path, problems)


def _unique(rows: list[dict[str, Any]], path: str, problems: list[Problem]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    kept = []
    for row in rows:
        if row["key"] in seen:
            problems.append(Problem(path, "degraded", f"line {row.get('line')}: duplicate of an earlier entry; skipped"))
            continue
        seen.add(row["key"])
        kept.append(row)
    return kept
