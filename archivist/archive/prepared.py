"""A session read whole, made ready to store: hashed (an unchanged one is not stored again), its
secrets masked, and its document and message rows made (``prepare``), with no database at hand,
so that a worker process can do it (``session_worker``) while ``sessions`` writes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from archivist import documents
from archivist.agents import Edit, Message, Session, Tail, ToolCall, Usage
from archivist.archive import schema
from archivist.archive.session_rows import Before, Found, document_rows

if TYPE_CHECKING:
    from archivist.secrets import Masker

# How sessions are stored; a change reads every source again (with the parser's version).
# 2: the body is the opening prompt, messages searched one by one; 3: agent and project words
# by date; 4: role words (a message's role; a session's, those of its messages); 5: token usage
# and attachments of each message, a session's usage totalled; 6: the tools a session used, as words;
# 7: the cache's one-hour writes apart, a Claude Code sub-agent's project its parent's (every source
# read again, so the readers' repairs of this version reach what is stored); 8: each tool call's
# input, and the changes it made to files (``edits``); 9: the git branch a session ran on, as its
# words (the branches filter)
LAYOUT = 11  # 11: a message searched by its calls' commands and files too (archive.searched)


def new_masker(key: bytes | None) -> Masker:
    """A masker for an archive's ``key`` (``workspace.secret_key``)."""
    from archivist.secrets import Masker  # (its patterns take a while to compile: only where logs are read)

    return Masker(key)


@dataclass
class Prepared:
    """A session read whole, made ready to store (``prepare``): its key and problems masked, its
    content hash, and, unless it is stored as it is, its document and message rows, masked."""

    key: str  # its document's key: the source's, then the session's key masked
    label: str  # how its problems name it: agent:key, masked
    content_hash: str
    problems: list[str]
    agent: str
    project: str | None
    models: list[str]
    files: list[Path]
    tail: Tail | None
    rows: tuple[dict[str, Any], list[dict[str, Any]]] | None  # (document, messages); None: unchanged
    # "whole": a session read whole; of one read in parts (``prepare_parts``): "first", its first
    # part, stored as a session; "more", messages to add to it; "last", its fields once read whole
    part: str = "whole"


def prepare(
    session: Session,
    source: str,
    known: Callable[[str], str | None],
    now: str,
    masker: Masker,
    content_hash: str | None = None,
) -> Prepared:
    """What storing ``session`` takes, but for the database: ``known`` gives the content hash of
    the source's stored session of a key, if any (one that is the same is not masked nor made
    into rows). ``content_hash``: its hash where it is not its own (a session read in parts)."""
    content_hash = content_hash or session_hash(session)
    if len(session.messages) > schema.MESSAGE_IDS:
        session.problems.append(f"only its first {schema.MESSAGE_IDS} of {len(session.messages)} messages are kept")
        session.tail = None
    session_key = masker.name(session.key)
    key = f"{source}:{session_key}"
    rows, files = None, session.files  # (the files as read: what they were is what was read)
    if known(key) != content_hash:
        masked, found = mask_session(session, masker)
        rows = document_rows(masked, source, now, content_hash, found)
        session = masked
    return Prepared(
        key,
        f"{session.agent}:{session_key}",
        content_hash,
        [masker.name(problem) for problem in session.problems],
        session.agent,
        session.project,
        session.models,
        files,
        session.tail,
        rows,
    )


def prepare_parts(
    session: Session, source: str, known: Callable[[str], str | None], now: str, masker: Masker
) -> Iterator[Prepared]:
    """What storing ``session`` takes (``prepare``), or, for a session read in parts (``more``), one
    ``Prepared`` a part, each made as it is read: memory holds one part, never the session.

    Its first part is stored as a session of its own; each next part's messages are added to it,
    and its document row made again with what the parts before it counted (``Before``); the last
    gives its fields as they are once it is read whole (title, last time, problems, where to read
    on). Its content hash is chained through the parts and its final fields. One stored before is
    first only hashed, part by part: unchanged, nothing of it is stored; changed, it is read again
    (``again``) and stored (where it cannot be read again, it is stored as it is read).
    """
    if session.more is None:
        yield prepare(session, source, known, now, masker)
        return
    stored = known(f"{source}:{masker.name(session.key)}")
    if stored is not None and session.again is not None:
        content_hash = _hash_parts(session)
        if content_hash == stored:
            yield prepare(_fields(session), source, known, now, masker, content_hash)  # (unchanged: no rows)
            return
        again = session.again()
        if again is None or again.more is None:  # (gone, or read whole now)
            if again is not None:
                yield prepare(again, source, known, now, masker)
            return
        session = again
    yield from _store_parts(session, source, now, masker)


def _fields(session: Session) -> Session:
    """A session read in parts as its fields alone, once its parts are read (no message)."""
    return replace(session, messages=[], more=None, again=None)


def _hash_parts(session: Session) -> str:
    """The content hash of a session read in parts (``_store_parts`` stores it with it): its parts
    used up, hashed one after the other, and its fields once they are read."""
    assert session.more is not None
    chain = session_hash(replace(session, more=None, again=None))
    for messages in session.more:
        chain = _chained(chain, session_hash(replace(session, messages=messages, more=None, again=None)))
    return _chained(chain, session_hash(_fields(session)))


def _chained(chain: str, digest: str) -> str:
    return hashlib.sha256(f"{chain}\x00{digest}".encode()).hexdigest()


def _store_parts(session: Session, source: str, now: str, masker: Masker) -> Iterator[Prepared]:
    """A session read in parts, prepared part by part for storing (``prepare_parts``)."""
    assert session.more is not None
    first = prepare(replace(session, more=None, again=None), source, lambda key: None, now, masker)
    assert first.rows is not None  # (stored whatever is stored under its key)
    chain = first.content_hash
    yield replace(first, problems=[], tail=None, part="first")
    document = first.rows[0]
    for messages in session.more:
        piece = replace(session, messages=messages, more=None, again=None)
        chain = _chained(chain, session_hash(piece))
        masked, found = mask_session(piece, masker)
        found.session = 0  # (its fields were counted with its first part)
        document, rows = document_rows(masked, source, now, chain, found, _before(document))
        yield replace(first, content_hash=chain, problems=[], tail=None, rows=(document, rows), part="more")
    chain = _chained(chain, session_hash(_fields(session)))
    masked, _ = mask_session(_fields(session), masker)
    document, _ = document_rows(masked, source, now, chain, Found(), _before(document))
    yield replace(
        first,
        content_hash=chain,
        problems=[masker.name(problem) for problem in session.problems],
        models=session.models,
        tail=session.tail,
        rows=(document, []),
        part="last",
    )


def _before(document: dict[str, Any]) -> Before:
    """What a session's document row counts of the messages stored so far, to add a part to."""
    extra = json.loads(document["extra"])
    counted = extra.get("usage") or {}
    return Before(
        messages=extra["messages"],
        secrets=extra["secrets_masked"],
        commands=extra["commands"],
        touched=extra["touched_files"],
        roles=extra["roles"],
        head=document["body"],
        usage=Usage(**{name: counted.get(name, 0) for name in Usage.FIELDS}, cost=counted.get("cost")),
        responses=counted.get("responses", 0),
        tools=extra["tools"],
    )


class _Names:
    """Short texts that a session repeats (a model, a tool's name), each masked once: what the
    masker found in one counted again wherever it stands."""

    def __init__(self, masker: Masker) -> None:
        self.masker = masker
        self.masked: dict[str, tuple[str, int]] = {}

    def __call__(self, text: str) -> str:
        known = self.masked.get(text)
        if known is None:
            known = self.masked[text] = self.masker.mask(text)
        self.masker.count += known[1]
        return known[0]


def _masked_call(call: ToolCall, masker: Masker, names: _Names) -> ToolCall:
    return ToolCall(
        names(call.name),
        [masker.name(file) for file in call.files],
        [masker(c) for c in call.commands],
        masker.name(call.agent) if call.agent else None,
        masker(call.input) if call.input else "",
        [_masked_edit(edit, masker) for edit in call.edits],
    )


def _masked_edit(edit: Edit, masker: Masker) -> Edit:
    def text(value: str | None) -> str | None:
        return masker(value) if value else value

    return Edit(masker.name(edit.file), text(edit.old), text(edit.new), text(edit.patch))


def mask_session(session: Session, masker: Masker) -> tuple[Session, Found]:
    """A copy of ``session`` with every field that carries text masked, and what was found."""
    found = Found()
    messages = []
    names = _Names(masker)
    for message in session.messages:
        counted = masker.count
        calls = [_masked_call(call, masker, names) for call in message.tool_calls]
        messages.append(
            Message(
                role=message.role,
                text=masker(message.text),
                timestamp=message.timestamp,
                model=names(message.model) if message.model else message.model,
                tool_calls=calls,
                thinking=masker(message.thinking),
                tool_output=masker(message.tool_output),
                usage=message.usage,
                attachments=[replace(a, name=masker.name(a.name) if a.name else a.name) for a in message.attachments],
            )
        )
        found.messages.append(masker.count - counted)
    counted = masker.count
    masked = replace(
        session,
        key=masker.name(session.key),
        title=masker(session.title),
        messages=messages,
        project=masker.name(session.project) if session.project else session.project,
        models=[masker(model) for model in session.models],
        branch=masker(session.branch) if session.branch else session.branch,
        files=[Path(masker.name(str(file))) for file in session.files],
        problems=[masker.name(problem) for problem in session.problems],
        parent=masker.name(session.parent) if session.parent else session.parent,
    )
    found.session = masker.count - counted
    return masked, found


def session_hash(session: Session) -> str:
    """A digest of everything stored of a session: one read again unchanged is not written again."""
    from archivist import secrets

    digest = hashlib.sha256()

    def add(*values: object) -> None:  # each value as text, then a NUL: in one update (the same bytes)
        digest.update("".join(f"{value}\x00" for value in values).encode("utf-8", "surrogatepass"))

    add(
        secrets.RULES_VERSION,
        documents.PARSER_VERSION,
        LAYOUT,
        session.title,
        session.agent,
        session.project,
        session.models,
        session.branch,
        session.started,
    )
    add(session.host)
    add(session.last, session.parent, [str(path) for path in session.files])
    for m in session.messages:
        add(m.role, m.timestamp, m.model, m.text, m.thinking, m.tool_output, m.usage, m.attachments)
        for call in m.tool_calls:
            add(call.name, call.files, call.commands, call.agent, call.input, call.edits)
    return digest.hexdigest()
