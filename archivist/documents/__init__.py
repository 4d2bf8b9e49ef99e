"""Walking a workspace: which files make which documents, and what each one says.

A *source* is the unit that is re-read when any of its files change: a
conversation folder, or one file. Parsing a source yields document rows, their
secrets masked (``MASKED_FIELDS``); a problem with a file never raises, it is
reported as a ``Problem``.
"""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import json
import math
import os
import re
import stat
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from archivist import dates
from archivist.jsonvalues import TOO_DEEP, over_budget

if TYPE_CHECKING:
    from archivist.secrets import Masker

TEXT_SUFFIXES = {".md", ".markdown", ".txt"}
MARKDOWN_SUFFIXES = {".md", ".markdown"}
IGNORED_DIRS = {".archivist", ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__"}
MAX_FILE_BYTES = 2 * 1024 * 1024  # one document's text
MAX_DATA_FILE_BYTES = 128 * 1024 * 1024  # a .jsonl or .csv file holds many documents
DATA_SUFFIXES = {".jsonl", ".csv"}
MAX_PROBLEMS_PER_FILE = 100  # listed one by one; the rest are counted in one more
# Bump when parsing changes what documents hold: the indexer then reads every source again.
PARSER_VERSION = 4  # 4: secrets masked in workspace documents
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
_YAML_KEY_RE = re.compile(r"\A\s*[\w-]+[ \t]*:")
_UNSTORABLE_RE = re.compile("[\x00\ud800-\udfff]")  # NUL, and lone surrogates from JSON or YAML escapes
_ID_RE = re.compile(r"-?[0-9]{1,18}")  # fits SQLite's 64-bit integers
# Bytes that plain text is made of, for telling binary files from text with a stray NUL.
_TEXT_BYTES = bytes(range(32, 256)) + b"\t\n\r\f\v\b\x1b"
_FILE_TYPES = (
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
)


@dataclass
class FileInfo:
    path: str  # relative to the workspace, with forward slashes, as stored (see safe_path)
    size: int
    mtime_ns: int
    os_path: str | None = None  # the name on disk, where it is not valid UTF-8 and ``path`` escapes it

    @property
    def disk_path(self) -> str:
        return self.os_path or self.path


@dataclass(frozen=True)
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


class _Skip(Exception):
    """Why an entry of the workspace is not indexed."""


def safe_path(path: str) -> str:
    """``path`` as text that can be stored: bytes of a name that are not UTF-8 become ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _why(error: OSError) -> str:
    return error.strerror or str(error)


def walk(root: Path, exclude: set[Path] | None = None) -> tuple[list[FileInfo], list[Problem]]:
    """Every regular file under ``root``; anything else there is a problem, with its reason.

    Tools' folders (``IGNORED_DIRS``) are passed over, and ``exclude`` (the archive)
    too. Folders are read one at a time, however deep. A symlink is followed only to
    a file inside the workspace, never to a folder (whose files are indexed where
    they are, if inside): the walk never leaves the workspace and never loops.
    """
    base = root.resolve()
    exclude = {p.resolve() for p in (exclude or set())}
    files: list[FileInfo] = []
    problems: list[Problem] = []
    folders = [""]
    while folders:
        folders.extend(reversed(_walk_folder(base, folders.pop(), exclude, files, problems)))
    return _unique_names(files, problems), problems


def _walk_folder(
    base: Path, folder: str, exclude: set[Path], files: list[FileInfo], problems: list[Problem]
) -> list[str]:
    """Add ``folder``'s files to ``files`` (and what is wrong to ``problems``); its subfolders."""
    try:
        with os.scandir(base / folder) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as error:
        problems.append(Problem(safe_path(folder) or ".", "skipped", f"unreadable folder: {_why(error)}"))
        return []
    subfolders = []
    for entry in entries:
        relative = f"{folder}/{entry.name}" if folder else entry.name
        try:
            if entry.name in IGNORED_DIRS and entry.is_dir():
                continue
            if entry.is_dir(follow_symlinks=False):
                subfolders.append(relative)
                continue
            info = _regular_file(entry, base, exclude)
        except _Skip as skip:
            problems.append(Problem(safe_path(relative), "skipped", str(skip)))
            continue
        except OSError as error:
            problems.append(Problem(safe_path(relative), "skipped", f"unreadable: {_why(error)}"))
            continue
        if info is not None:
            path = safe_path(relative)
            files.append(FileInfo(path, info.st_size, info.st_mtime_ns, None if path == relative else relative))
    return subfolders


def _regular_file(entry: os.DirEntry, base: Path, exclude: set[Path]) -> os.stat_result | None:
    """The stat of the regular file that ``entry`` is (or links to, inside ``base``); None if excluded.

    Raises ``_Skip`` for anything else: a FIFO or socket (never opened: reading
    one would block), a symlink leaving the workspace, looping or broken.
    """
    if entry.is_symlink():
        target = _link_target(entry, base)
        if target in exclude:
            return None
        info = target.stat()
        if stat.S_ISDIR(info.st_mode):
            raise _Skip("symlink to a folder: not followed (the files inside the workspace are indexed where they are)")
    else:
        if Path(entry.path) in exclude:
            return None
        info = entry.stat(follow_symlinks=False)
    if not stat.S_ISREG(info.st_mode):
        raise _Skip(f"not a regular file ({_file_type(info.st_mode)})")
    return info


def _link_target(entry: os.DirEntry, base: Path) -> Path:
    """Where a symlink leads, when that is inside ``base``; else ``_Skip``."""
    try:
        target = Path(entry.path).resolve(strict=True)
    except FileNotFoundError:
        raise _Skip("broken symlink") from None
    except RuntimeError:  # "Symlink loop" (Python before 3.13)
        raise _Skip("symlink loop") from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _Skip("symlink loop") from None
        raise
    if not target.is_relative_to(base):
        folder = " (to a folder)" if target.is_dir() else ""
        raise _Skip(f"symlink points outside the workspace{folder}")
    return target


def _file_type(mode: int) -> str:
    return next((name for test, name in _FILE_TYPES if test(mode)), "unknown type")


def _unique_names(files: list[FileInfo], problems: list[Problem]) -> list[FileInfo]:
    """``files`` less a name not valid UTF-8 whose escaped form is another file's name, written out."""
    seen = {info.path for info in files if info.os_path is None}
    unique = []
    for info in files:
        if info.os_path is not None and info.path in seen:
            reason = "file name is not valid UTF-8, and escaped it is another file's name"
            problems.append(Problem(f"{info.path} (not valid UTF-8)", "skipped", reason))
            continue
        seen.add(info.path)
        unique.append(info)
    return unique


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
            problems.append(
                Problem(info.path, "skipped", f"unsupported file type ({_suffix(info.path) or 'no extension'})")
            )
            continue
        path, kind = found
        source = sources.setdefault(path, Source(path, kind, reports_dir=reports_dir))
        source.files.append(info)
    return sources, problems


# --- reading -----------------------------------------------------------------


def read_text(root: Path, info: FileInfo, problems: list[Problem]) -> str | None:
    """The file's text, or None (with a problem recorded) when it has none to give.

    Text is capped (a caveat says so), decoded as UTF-8 with replacement, and
    rid of NUL bytes; only a file that looks binary is skipped as such.
    """
    cap = MAX_DATA_FILE_BYTES if _suffix(info.path) in DATA_SUFFIXES else MAX_FILE_BYTES
    try:
        raw = _read_regular(root / info.disk_path, cap + 1)
    except OSError as error:
        problems.append(Problem(info.path, "skipped", f"unreadable: {_why(error)}"))
        return None
    if not raw.strip():
        problems.append(Problem(info.path, "skipped", "empty file"))
        return None
    if _looks_binary(raw[:8192]):
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
            Problem(
                info.path, "degraded", f"larger than {cap // 2**20} MiB: only the first {cap // 2**20} MiB are indexed"
            )
        )
    if nuls := text.count("\x00"):
        text = text.replace("\x00", "")
        problems.append(Problem(info.path, "degraded", f"{nuls} NUL byte{'s' * (nuls > 1)} removed"))
    return text.lstrip("\ufeff")


def _read_regular(path: Path, limit: int) -> bytes:
    """Up to ``limit`` bytes of a regular file; OSError for anything else.

    Opened without blocking and checked once open: a FIFO put where a file was
    when the workspace was walked never hangs the run.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with open(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"not a regular file ({_file_type(mode)})")
        return handle.read(limit)


def _looks_binary(sample: bytes) -> bool:
    """NUL bytes among many control bytes (more than 1 in 10): binary, not text with a stray NUL."""
    return b"\x00" in sample and len(sample.translate(None, _TEXT_BYTES)) * 10 > len(sample)


class _FrontMatterLoader(yaml.SafeLoader):
    """Safe YAML as written: timestamps stay text, and aliases are refused.

    ``dates`` reads the text (and reports a date that is none, where YAML would
    raise on ``2026-02-30``); an alias could make a few lines expand without end.
    """

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "aliases are not allowed", self.peek_event().start_mark)
        return super().compose_node(parent, index)


_FrontMatterLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)  # type: ignore[type-var]


class _FastFrontMatterLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The same reading through libyaml (ten times faster), for front matter it cannot abuse.

    libyaml composes in C, where ``_FrontMatterLoader`` cannot refuse aliases: it only
    gets text with no anchor or alias mark (``&``, ``*``), no escapes (``\\``), few
    brackets and a bounded size, so that neither expansion nor deep nesting is
    possible. Anything else goes through ``_FrontMatterLoader``.
    """


_FastFrontMatterLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)
_FAST_YAML_MAX_CHARS = 64 * 1024
_FAST_YAML_MAX_BRACKETS = 64


def _front_matter_loader(text: str) -> type:
    if (
        len(text) <= _FAST_YAML_MAX_CHARS
        and "&" not in text
        and "*" not in text
        and "\\" not in text  # escapes: libyaml refuses some that the Python reader takes
        and text.count("[") + text.count("{") <= _FAST_YAML_MAX_BRACKETS
    ):
        return _FastFrontMatterLoader
    return _FrontMatterLoader


def split_front_matter(text: str, path: str = "", problems: list[Problem] | None = None) -> tuple[dict[str, Any], str]:
    """YAML front matter (a mapping) and the text after it.

    Anything else between ``---`` lines stays in the text; when it looked like
    front matter (``key: …``) but is not valid YAML, ``problems`` gets a caveat.
    """
    match = _FRONT_MATTER_RE.match(text)
    if not match:
        return {}, text
    try:
        meta = yaml.load(match[1], Loader=_front_matter_loader(match[1]))
    except Exception as error:  # YAML raises more than YAMLError on odd input (RecursionError, ValueError)
        if problems is not None and _YAML_KEY_RE.match(match[1]):
            why = getattr(error, "problem", None) or type(error).__name__
            problems.append(Problem(path, "degraded", f"front matter is not valid YAML ({why}): read as text"))
        return {}, text
    if meta is None:
        return {}, text[match.end() :]
    if not isinstance(meta, dict):
        return {}, text
    return meta, text[match.end() :]


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
            if word == known or (
                word.startswith(known) and word[len(known) :] in {"s", "ed", "ing", "ging", "ning", "er", "ers"}
            ):
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
    exact word; SQL builds the same with ``hex()``. A message of an agent log
    (``dated_names``) also has its agent's and project's words with each of its dates.
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
    if document["kind"] == "conversation":
        # a conversation's agent (an agent-log kind, or "workspace" for the workspace's own),
        # project (its path and its last folder's name), models and the files it touched
        tokens.append("a" + _hex(str(document.get("agent") or "workspace").lower()))
        if project := document.get("project"):
            project = str(project).rstrip("/") or "/"
            tokens.extend("j" + _hex(name) for name in dict.fromkeys([project, project.rsplit("/", 1)[-1]]) if name)
        tokens.extend("o" + _hex(str(model)) for model in dict.fromkeys(document.get("models") or []))
        for file in dict.fromkeys(document.get("files") or []):
            tokens.extend("f" + _hex(name) for name in dict.fromkeys([str(file), str(file).rsplit("/", 1)[-1]]) if name)
        if document.get("dated_names") and document.get("day"):
            # a message: its agent's and project's words of its day, month and year too
            # (a<hex>m202507), so that an agent or project filter with a date is one short list
            day = str(document["day"])
            named = [token for token in tokens if token[0] in "aj"]
            tokens.extend(
                name + date
                for name in named
                for date in (f"y{day[:4]}", f"m{day[:7]}".replace("-", ""), "d" + day.replace("-", ""))
            )
    for day in document.get("more_days") or []:  # a session that runs past midnight: each of its days
        tokens.extend(prefix + "d" + day.replace("-", "") for prefix in ["", *prefixes])
    return " ".join(tokens)


def _hex(text: str) -> str:
    return text.encode("utf-8", "surrogatepass").hex()


# --- parsing -----------------------------------------------------------------


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


def exit_with_parent(parent: int) -> None:
    """In a worker process (``indexer``): exit as soon as the process ``parent`` is gone (killed,
    say), where it would wait for work from it for ever."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="archivist-exit-with-parent", daemon=True).start()


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


# What of a workspace document carries its text: masked (build.secrets) before it is stored.
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


def storable(value: Any) -> Any:
    """``value`` as SQLite stores it whole.

    Strings become valid UTF-8 without NUL (a lone surrogate, from a JSON or YAML
    escape, becomes U+FFFD), keys become text, and NaN and infinity (which
    SQLite's JSON functions reject) become null.
    """
    if isinstance(value, str):
        if "\x00" not in value:
            if value.isascii():
                return value  # the common case, at C speed
            try:
                value.encode("utf-8")  # ten times faster than the pattern below, where nothing is to change
                return value
            except UnicodeEncodeError:
                pass
        return _UNSTORABLE_RE.sub(lambda match: "" if match[0] == "\x00" else "\ufffd", value)
    if isinstance(value, dict):
        return {storable(str(key)): storable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


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


def _memory_row(path: str, line: int, record: dict[str, Any], problems: list[Problem], at: str = "") -> dict[str, Any]:
    content = str(record.get("content") or record.get("text") or "").strip()
    external_id = str(record.get("content_hash") or record.get("id") or sha256(storable(content))[:16])
    title = str(record.get("title") or content.split("\n", 1)[0])
    document = {
        "key": f"memory:{path}#{external_id}",
        "path": path,
        "line": line,
        "name": path.rsplit("/", 1)[-1],
        "external_id": external_id,
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
        "key": f"record:{path}#{entity_type}:{external_id}",
        "path": path,
        "line": line,
        "name": path.rsplit("/", 1)[-1],
        "external_id": external_id,
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
