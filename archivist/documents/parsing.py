"""Parsing a source: its files read, parsed by its kind, masked and made storable; whatever
goes wrong is a problem of that source alone."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archivist.documents.kinds import (
    _parse_conversation,
    _parse_memory,
    _parse_note,
    _parse_records,
    _parse_report,
)
from archivist.documents.model import Parsed, Problem, Source, sha256, storable
from archivist.documents.reading import read_text
from archivist.documents.vocabulary import filter_tokens

if TYPE_CHECKING:
    from archivist.secrets import Masker

MAX_PROBLEMS_PER_FILE = 100  # listed one by one; the rest are counted in one more
# Bump when parsing changes what documents hold: the indexer then reads every source again.
PARSER_VERSION = 5  # 4: secrets masked in workspace documents; 5: role words (vocabulary)


def parse(root: Path, source: Source, key: bytes | None = None) -> Parsed:
    """The documents of one source, and its problems; secrets masked with the archive's ``key``.

    Never raises for what is in the workspace: an error nobody foresaw skips this
    source alone, with its reason, and the run goes on.
    """
    try:
        return _parse(root, source, key)
    except Exception as error:
        return unparsed(source, f"could not be indexed ({type(error).__name__}: {storable(str(error))[:200]})")


def parse_all(root: Path, sources: list[Source], key: bytes | None = None) -> list[Parsed]:
    """``parse`` of each source (in a worker process: ``indexer``)."""
    return [parse(root, source, key) for source in sources]


def unparsed(source: Source, reason: str) -> Parsed:
    """A source none of whose files is indexed, for ``reason``."""
    return Parsed([], [Problem(info.path, "skipped", reason) for info in source.files], content_hash="")


def _parse(root: Path, source: Source, key: bytes | None) -> Parsed:
    from archivist.secrets import Masker  # (its patterns take a while to compile: only where files are read)

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
        if info.os_path is not None:
            problems.append(Problem(info.path, "degraded", "file name is not valid UTF-8: stored with \\xNN escapes"))
        text = read_text(root, info, problems)
        if text is not None:
            texts.append((info, text))
    content_hash = sha256("\x00".join(f"{info.path}\x00{text}" for info, text in texts))
    masker = Masker(key)
    documents = [_finish(document, source, masker) for document in (parser(source, texts, problems) if texts else [])]
    return Parsed(documents, _capped(problems), content_hash)


# What of a workspace document carries its text: masked (``archivist.secrets``) before it is stored.
MASKED_FIELDS = ("title", "body", "tags", "extra")


def _finish(document: dict[str, Any], source: Source, masker: Masker) -> dict[str, Any]:
    """A parsed document as the documents table stores it, its secrets masked."""
    document = storable(document)
    # a conversation's own files: paths in the workspace, stored as its path is (the source view reads them)
    files = (document.get("extra") or {}).get("files") if source.kind == "conversation" else None
    for name in MASKED_FIELDS:
        if document.get(name) is not None:
            document[name] = masker.values(document[name])
    if files is not None:
        document["extra"]["files"] = files
    document.setdefault("source", source.path)
    document.setdefault("kind", source.kind)
    document["filter_tokens"] = filter_tokens(document)
    document.setdefault("content_hash", sha256(f"{document.get('title') or ''}\x00{document.get('body') or ''}"))
    document["tags"] = json.dumps(document.get("tags") or [])
    document["extra"] = json.dumps(document.get("extra") or {}, default=str, ensure_ascii=False)
    return document


def _capped(problems: list[Problem]) -> list[Problem]:
    """``problems`` without duplicates, at most ``MAX_PROBLEMS_PER_FILE`` a file: one more counts the rest."""
    listed: Counter[str] = Counter()
    left_out: dict[str, list[Problem]] = {}
    kept = []
    for problem in dict.fromkeys(problems):
        if listed[problem.path] < MAX_PROBLEMS_PER_FILE:
            listed[problem.path] += 1
            kept.append(problem)
        else:
            left_out.setdefault(problem.path, []).append(problem)
    for path, more in left_out.items():
        status = "skipped" if any(p.status == "skipped" for p in more) else "degraded"
        kept.append(Problem(path, status, f"… and {len(more)} more problems like these, not listed"))
    return kept
