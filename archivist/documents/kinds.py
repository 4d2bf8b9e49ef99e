"""The five kinds of workspace document, each parsed from its source's texts into document
rows: conversations, reports and notes (markdown), memories and records (one per line or row)."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from typing import Any

from archivist import dates
from archivist.documents.frontmatter import first_heading, humanize, normalize_tags, split_front_matter
from archivist.documents.model import FileInfo, Problem, Source, sha256, storable
from archivist.documents.reading import MAX_FILE_BYTES
from archivist.documents.sources import CONVERSATION_TYPES, _suffix
from archivist.jsonvalues import TOO_DEEP, over_budget

_ID_RE = re.compile(r"-?[0-9]{1,18}")  # fits SQLite's 64-bit integers


def _label(value: Any) -> str | None:
    """A type or such as text; None when empty."""
    text = "" if value is None else str(value).strip()
    return text or None


def _dated(
    document: dict[str, Any],
    found: list[dates.DocDate | None],
    invalid: list[dates.InvalidDate],
    problems: list[Problem],
    path: str,
    at: str = "",
) -> dict[str, Any]:
    """Date ``document`` by the first of ``found``; each invalid date met is a caveat on ``path``."""
    date = next((candidate for candidate in found if candidate is not None), None)
    document.update(date.columns() if date else dates.NO_DATE_COLUMNS)
    outcome = "ignored" if date else "undated"
    problems.extend(Problem(path, "degraded", f"{at}{bad}; {outcome}") for bad in invalid)
    return document


def _markdown_doc(info: FileInfo, text: str, problems: list[Problem]) -> tuple[dict[str, Any], dict[str, Any]]:
    meta, body = split_front_matter(text, info.path, problems)
    name = info.path.rsplit("/", 1)[-1]
    title = meta.get("title") or first_heading(body) or humanize(name)
    return meta, {
        "path": info.path,
        "name": name,
        "title": str(title).strip(),
        "body": body.strip(),
        "tags": normalize_tags(meta.get("tags")),
    }


def _type_from_slug(slug: str) -> str | None:
    words = re.split(r"[-_\s.]+", slug.lower())
    for word in words:
        for known in CONVERSATION_TYPES:
            if word == known or (
                word.startswith(known) and word[len(known) :] in {"s", "ed", "ing", "ging", "ning", "er", "ers"}
            ):
                return known
    return None


def _parse_conversation(
    source: Source, texts: list[tuple[FileInfo, str]], problems: list[Problem]
) -> list[dict[str, Any]]:
    parts = source.path.split("/")
    slug = parts[2]
    metas: list[tuple[FileInfo, dict[str, Any]]] = []
    bodies: list[str] = []
    for info, text in texts:
        meta, body = split_front_matter(text, info.path, problems)
        metas.append((info, meta))
        bodies.append(body.strip())
    meta_info, meta = next(((info, meta) for info, meta in metas if meta), (texts[0][0], {}))
    body = "\n\n".join(b for b in bodies if b)
    folder_type = None if parts[0] == "conversations" else parts[0].lower()
    document = {
        "key": f"conversation:{source.path}",
        "path": source.path,
        "name": slug,
        "type": _label(meta.get("type")) or folder_type or _type_from_slug(slug),
        "title": str(meta.get("title") or first_heading(body) or humanize(slug)).strip(),
        "body": body,
        "tags": normalize_tags(meta.get("tags")),
        "extra": {"files": [info.path for info, _ in texts]},
    }
    single_file = source.files[0].path == source.path
    invalid: list[dates.InvalidDate] = []
    found = [
        dates.from_front_matter(meta, invalid),
        dates.from_path(source.path, invalid) if single_file else dates.from_folders(parts[:2], invalid),
    ]
    return [_dated(document, found, invalid, problems, meta_info.path)]


def _parse_report(source: Source, texts: list[tuple[FileInfo, str]], problems: list[Problem]) -> list[dict[str, Any]]:
    info, text = texts[0]
    depth = len(source.reports_dir.strip("/").split("/"))
    meta, fields = _markdown_doc(info, text, problems)
    document = {"key": f"report:{info.path}", "type": info.path.split("/")[depth], **fields}
    # Reports are dated by their file name (seed 001); front matter may still say more.
    invalid: list[dates.InvalidDate] = []
    found = [dates.from_front_matter(meta, invalid), dates.from_name(fields["name"].rsplit(".", 1)[0], invalid)]
    return [_dated(document, found, invalid, problems, info.path)]


def _parse_note(source: Source, texts: list[tuple[FileInfo, str]], problems: list[Problem]) -> list[dict[str, Any]]:
    info, text = texts[0]
    meta, fields = _markdown_doc(info, text, problems)
    document = {"key": f"note:{info.path}", "type": _label(meta.get("type")), **fields}
    invalid: list[dates.InvalidDate] = []
    found = [dates.from_front_matter(meta, invalid), dates.from_path(info.path, invalid)]
    return [_dated(document, found, invalid, problems, info.path)]


def _line_document(key: str, path: str, line: int, external_id: str) -> dict[str, Any]:
    """The fields of a document read from one line of a file (a memory or a record): where it is, and its id."""
    return {"key": key, "path": path, "line": line, "name": path.rsplit("/", 1)[-1], "external_id": external_id}


def _memory_row(path: str, line: int, record: dict[str, Any], problems: list[Problem], at: str = "") -> dict[str, Any]:
    content = str(record.get("content") or record.get("text") or "").strip()
    external_id = str(record.get("content_hash") or record.get("id") or sha256(storable(content))[:16])
    title = str(record.get("title") or content.split("\n", 1)[0])
    document = {
        **_line_document(f"memory:{path}#{external_id}", path, line, external_id),
        "type": _label(record.get("memory_type") or record.get("type")),
        "title": title[:120],
        "body": content,
        "tags": normalize_tags(record.get("tags")),
        "extra": {k: v for k, v in record.items() if k not in {"content", "text", "tags"}},
    }
    key = next((k for k in ("created_at", "timestamp", "date", "created") if record.get(k) not in (None, "")), None)
    invalid: list[dates.InvalidDate] = []
    found = dates.from_value(record[key], repr(key), invalid) if key else None
    return _dated(document, [found], invalid, problems, path, at)


def _parse_memory(source: Source, texts: list[tuple[FileInfo, str]], problems: list[Problem]) -> list[dict[str, Any]]:
    info, text = texts[0]
    if _suffix(info.path) != ".jsonl":
        meta, body = split_front_matter(text, info.path, problems)
        record = {**meta, "content": body.strip(), "title": meta.get("title") or first_heading(body)}
        if not record["title"]:
            record.pop("title")
        return _unique([_memory_row(info.path, 1, record, problems)], info.path, problems)
    rows = [
        _memory_row(info.path, line, record, problems, f"line {line}: ")
        for line, record in _json_lines(info.path, text, problems)
    ]
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
        except (ValueError, RecursionError) as error:  # JSONDecodeError, and numbers or nesting too large
            why = _json_error(error)
            problems.append(Problem(path, "degraded", f"line {number}: invalid JSON ({why}); line skipped"))
            continue
        if over_budget(line, record):
            problems.append(Problem(path, "degraded", f"line {number}: {TOO_DEEP}; line skipped"))
            continue
        if not isinstance(record, dict):
            problems.append(Problem(path, "degraded", f"line {number}: not a JSON object; line skipped"))
            continue
        yield number, record


def _json_error(error: ValueError | RecursionError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return error.msg
    if isinstance(error, RecursionError):
        return "nested too deep"
    return str(error).split(":", 1)[0]  # "Exceeds the limit (4300 digits) for integer string conversion"


def _csv_rows(path: str, text: str, problems: list[Problem]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each row of a CSV file as (the line it starts on, {column: value}).

    A row with more or fewer fields than the header is listed and skipped; a CSV
    error (a quote left open past the field size limit) ends the file there.
    """
    csv.field_size_limit(max(csv.field_size_limit(), MAX_FILE_BYTES))  # one record's body may be long
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    end = 0
    try:
        for fields in reader:
            start, end = end + 1, reader.line_num
            if not "".join(fields).strip():
                continue  # a blank line
            if header is None:
                header = [name.strip() for name in fields]
            elif len(fields) != len(header):
                reason = f"line {start}: {len(fields)} fields where the header has {len(header)}; row skipped"
                problems.append(Problem(path, "degraded", reason))
            else:
                yield start, dict(zip(header, fields))
    except csv.Error as error:
        problems.append(Problem(path, "degraded", f"line {end + 1}: {error}; the rest of the file is skipped"))


def _product_id(value: Any) -> int | None:
    text = "" if value is None else str(value).strip()
    return int(text) if _ID_RE.fullmatch(text) else None


def _record_row(path: str, line: int, record: dict[str, Any], problems: list[Problem]) -> dict[str, Any]:
    entity_type = str(record.get("entity_type") or "").strip().lower() or None
    entity_id = record.get("entity_id")
    external_id = str(entity_id) if entity_id not in (None, "") else f"line-{line}"
    body = str(record.get("body") or record.get("description") or "").strip()
    title = str(record.get("title") or "").strip() or body.split("\n", 1)[0][:120] or f"{entity_type} {external_id}"
    document = {
        **_line_document(f"record:{path}#{entity_type}:{external_id}", path, line, external_id),
        "type": entity_type,
        "title": title,
        "body": body,
        "tags": normalize_tags(record.get("tags")),
        "product_id": _product_id(record.get("product_id")),
        "extra": {k: v for k, v in record.items() if k not in {"title", "body", "tags"}},
    }
    invalid: list[dates.InvalidDate] = []
    found = dates.from_value(record.get("timestamp"), "'timestamp'", invalid)
    return _dated(document, [found], invalid, problems, path, f"line {line}: ")


def _parse_records(source: Source, texts: list[tuple[FileInfo, str]], problems: list[Problem]) -> list[dict[str, Any]]:
    info, text = texts[0]
    lines = _csv_rows if _suffix(info.path) == ".csv" else _json_lines
    rows = []
    for line, record in lines(info.path, text, problems):
        if not record.get("entity_type"):
            problems.append(Problem(info.path, "degraded", f"line {line}: record has no entity_type; skipped"))
            continue
        rows.append(_record_row(info.path, line, record, problems))
    return _unique(rows, info.path, problems)


def _unique(rows: list[dict[str, Any]], path: str, problems: list[Problem]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    kept = []
    for row in rows:
        if row["key"] in seen:
            problems.append(
                Problem(path, "degraded", f"line {row.get('line')}: duplicate of an earlier entry; skipped")
            )
            continue
        seen.add(row["key"])
        kept.append(row)
    return kept
