"""Front matter (YAML read safely, and fast where it can be), titles and tags."""

from __future__ import annotations

import re
from typing import Any

import yaml

from archivist.documents.model import Problem
from archivist.documents.sources import TEXT_SUFFIXES, _suffix

_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
_HEADING_RE = re.compile(r"^#{1,3}[ \t]+(.+?)[ \t#]*$", re.M)
_YAML_KEY_RE = re.compile(r"\A\s*[\w-]+[ \t]*:")


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


def normalize_tags(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        items: list[Any] = re.split(r"[,\s]+", value)
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = [value]
    return [tag for tag in dict.fromkeys(str(item).strip().lstrip("#").lower() for item in items) if tag]


def first_heading(text: str) -> str | None:
    match = _HEADING_RE.search(text)
    return match[1].strip() if match else None


def humanize(slug: str) -> str:
    stem = slug.rsplit(".", 1)[0] if _suffix(slug) in TEXT_SUFFIXES else slug
    stem = re.sub(r"^\d{1,4}[-_]", "", stem)
    words = re.sub(r"[-_]+", " ", stem).strip()
    return words[:1].upper() + words[1:] if words else slug
