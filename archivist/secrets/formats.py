"""Token formats: the keys and tokens known by their shape, each matched where its anchor stands
(Anthropic, OpenAI, Hugging Face, the prefixed ones, and those of detect-secrets' plugins), and
the same formats in names made from paths."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from archivist.secrets.spans import _BY_FORMAT, _Anchored, _Span
from archivist.secrets.values import _mixed, _placeholder


def _token_formats(text: str, hits: _Anchored) -> Iterator[_Span]:
    """The formats read here, each tried only where its prefix stands (``anchors._Hits``)."""
    for position in hits.of("sk-"):
        for pattern, kind in ((_ANTHROPIC, "anthropic-api-key"), (_OPENAI, "openai-api-key")):
            match = pattern.match(text, position)
            if match and _mixed(match.group("body")) and not _placeholder(match.group(0)):
                yield _Span(match.start(), match.end(), kind, _BY_FORMAT)
    for position in hits.of("hf_"):
        match = _HUGGING_FACE.match(text, position)
        value = match.group(0) if match else ""
        if match and value.lower() != value and value.upper() != value and not _placeholder(value):
            yield _Span(match.start(), match.end(), "huggingface-token", _BY_FORMAT)
    for anchor, pattern, kind in _PREFIXED:
        for position in hits.of(anchor):
            match = pattern.match(text, position)
            if match and not _placeholder(match.group(0)):
                yield _Span(match.start(), match.end(), kind, _BY_FORMAT)


# Bounded lengths, read possessively: inside a long run of base64url a match is chance, and
# must cost no more than its bound.
_ESCAPES = ("\\n", "\\r", "\\t")  # a line break or a tab escaped in JSON text, as it stands there


def _starts_after_none_of(characters: str) -> str:
    """A pattern's start: not after one of ``characters`` (in a longer token, or a word), unless that
    is the letter of a line break or a tab escaped in JSON text (``"…\\nhf_…"``)."""
    return rf"(?:(?<![{characters}])|(?<=\\[nrt]))"


# A hyphen may stand before the prefixes that say what they are (``sk-ant-``, ``hf_``), as it does in
# a name (``ledger-hf_…``); before a bare ``sk-`` it is part of a longer token or of a word
# (``locale-sk-SK-…``).
_ANTHROPIC = re.compile(
    _starts_after_none_of("A-Za-z0-9_")
    + r"sk-ant-[a-z]{2,10}[0-9]{0,3}-(?P<body>[A-Za-z0-9_-]{32,300}+)(?![A-Za-z0-9_-])"
)
_OPENAI = re.compile(
    _starts_after_none_of("A-Za-z0-9_-")
    + r"sk-(?!ant-)(?:(?:proj|svcacct|admin)-)?(?P<body>[A-Za-z0-9_-]{32,300}+)(?![A-Za-z0-9_-])"
)
_HUGGING_FACE = re.compile(_starts_after_none_of("A-Za-z0-9_") + r"hf_[A-Za-z0-9]{34}(?![A-Za-z0-9_-])")
_PREFIXED = (
    (
        "github_pat_",
        re.compile(r"github_pat_[A-Za-z0-9]{20,40}_[A-Za-z0-9_]{30,120}+(?![A-Za-z0-9_-])"),
        "github-token",
    ),
    # Bounded on both sides: inside a long base64 blob (a font, a wasm module) "AIza" is chance.
    (
        "AIza",
        re.compile(_starts_after_none_of("A-Za-z0-9+/_-") + r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9+/=_-])"),
        "google-api-key",
    ),
)


# --- token formats found where their anchor stands ------------------------------

_TAIL = re.compile(r"[A-Za-z0-9_-]*")
_JWT_TAIL = re.compile(r"[A-Za-z0-9_.+/=-]*")
# What a token standing alone may not have beside it: the characters of base64 but '/', which also
# separates a path's parts. Inside a run of base64 a key's shape between two '/' is chance too, but
# 4096 times rarer than the shape alone, itself one in 10^11 places of random base64.
_BASE64_BESIDE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+")


class _Format(NamedTuple):
    """A token format: matched where one of its anchors stands (``offset`` characters after it), then
    widened to the end of its token (``tail``; None: not widened, and it must stand alone, not
    inside a longer run of base64, where AKIA and 16 capitals and digits is chance; a '/' beside
    it is a path's separator, ``src/AKIA…/x.py``)."""

    anchors: tuple[str, ...]
    pattern: re.Pattern[str]
    kind: str
    offset: int = 0
    tail: re.Pattern[str] | None = _TAIL
    valid: Callable[[str], bool] | None = None
    # Where a failed try ends: no anchor before it can start a match (an unbounded part that the
    # next anchors would each read again to its end, a hostile line of them in quadratic time).
    failed: re.Pattern[str] | None = None


def _formal_jwt(token: str) -> bool:
    """A JWT's header and payload are base64url of JSON (as detect-secrets' JwtTokenDetector asks)."""
    for part in token.split(".")[:2]:
        try:
            json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode("utf-8"))
        except (ValueError, UnicodeDecodeError, binascii.Error):
            return False
    return True


_GITLAB_PREFIXES = ("pat", "dt", "ft", "soat", "rt", "cbt", "imt", "ptt", "agent", "oas")
# The formats of detect-secrets 1.5's plugins (its aws, github_token, slack, stripe, jwt, gitlab_token,
# npm, pypi_token, sendgrid, square_oauth and azure_storage_key), written here possessive and matched at
# each anchor: its patterns backtrack (a line of 300 KB of ``eyJ`` took its JWT pattern 15 s) and run
# over whole lines. Its openai plugin's keys are _OPENAI's.
_FORMATS = (
    _Format(
        ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"),
        re.compile(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"),
        "aws-access-key",
        tail=None,
    ),
    _Format(tuple(f"gh{c}_" for c in "pousr"), re.compile(r"gh[pousr]_[A-Za-z0-9_]{36}"), "github-token"),
    _Format(
        tuple(f"xox{c}-" for c in "abposr"),
        re.compile(r"xox[abposr]-(?:[0-9]++-)++[a-z0-9]++", re.IGNORECASE),
        "slack-token",
    ),
    _Format(
        ("hooks.slack.com",),
        re.compile(r"https://hooks\.slack\.com/services/T[a-zA-Z0-9_]++/B[a-zA-Z0-9_]++/[a-zA-Z0-9_]++"),
        "slack-webhook",
        offset=-len("https://"),
    ),
    _Format(("k_live_",), re.compile(r"[rs]k_live_[0-9a-zA-Z]{24}"), "stripe-key", offset=-1),
    _Format(
        ("eyJ",),
        re.compile(r"eyJ[A-Za-z0-9_=-]++\.[A-Za-z0-9_=-]++"),
        "jwt",
        tail=_JWT_TAIL,
        valid=_formal_jwt,
        failed=re.compile(r"[A-Za-z0-9_=-]*"),  # its header: an eyJ inside it starts the same rest
    ),
    _Format(
        tuple(f"gl{p}-" for p in _GITLAB_PREFIXES),
        re.compile(
            r"(?:(?:glpat|gldt|glft|glsoat|glrt)-[A-Za-z0-9_-]{20,50}+|glcbt-(?:[0-9a-fA-F]{2}_)?[A-Za-z0-9_-]{20,50}+"
            r"|glimt-[A-Za-z0-9_-]{25}|glptt-[A-Za-z0-9_-]{40}|glagent-[A-Za-z0-9_-]{50,1024}+|gloas-[A-Za-z0-9_-]{64})"
            r"(?!\w)"
        ),
        "gitlab-token",
    ),
    # //registry.npmjs.org/:_authToken=npm_…: the value after a registry's path
    _Format(
        ("/:_authToken=",),
        re.compile(r"[ \t]*+(?:npm_[A-Za-z0-9_-]++|[A-Fa-f0-9-]{36})"),
        "npm-token",
        offset=len("/:_authToken="),
    ),
    _Format(
        ("pypi-AgE",),
        re.compile(r"pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{70,}+"),
        "pypi-token",
    ),
    _Format(("SG.",), re.compile(r"SG\.[a-zA-Z0-9_-]{22}\.[a-zA-Z0-9_-]{43}"), "sendgrid-api-key"),
    _Format(("sq0csp-",), re.compile(r"sq0csp-[0-9A-Za-z\\_-]{43}"), "square-oauth-secret"),
    _Format(("AccountKey=",), re.compile(r"[a-zA-Z0-9+/=]{88}"), "azure-storage-key", offset=len("AccountKey=")),
)


def _library(text: str, hits: _Anchored) -> Iterator[_Span]:
    """The token formats of ``_FORMATS``, each matched where its anchors stand, each place once."""
    for form in _FORMATS:
        done = -1  # where the last match ended: a hit inside it is part of it
        for hit in hits.of(*form.anchors):
            at = hit + form.offset
            if at < done or at < 0:
                continue
            match = form.pattern.match(text, at)
            if match is None or (form.valid is not None and not form.valid(match.group(0))):
                if form.failed is not None:
                    done = form.failed.match(text, at).end()  # type: ignore[union-attr]
                continue
            start, stop = match.start(), match.end()
            if form.kind == "npm-token":
                start += len(match.group(0)) - len(match.group(0).lstrip(" \t"))
            if form.tail is None:
                before, after = text[start - 1 : start], text[stop : stop + 1]
                if start >= 2 and text[start - 2 : start] in _ESCAPES:
                    before = ""  # a line break escaped in JSON text
                if before in _BASE64_BESIDE or after in _BASE64_BESIDE or after == "=":
                    continue  # inside a longer run of base64: chance
            else:
                stop = form.tail.match(text, stop).end()  # type: ignore[union-attr]
            done = stop
            if not _placeholder(text[start:stop]):
                yield _Span(start, stop, form.kind, _BY_FORMAT)


# --- token formats in names made from paths -------------------------------------

# Each format whose '_' a path-to-name mangling turns into '-', in that form: bounded by what is
# not a letter or a digit, and only where the run has the mix of cases and digits keys have.
_MANGLED = (
    (re.compile(r"(?<![A-Za-z0-9])gh[pousr]-[A-Za-z0-9]{36,251}+"), "github-token"),
    (re.compile(r"(?<![A-Za-z0-9])github-pat-[A-Za-z0-9-]{82}"), "github-token"),
    (re.compile(r"(?<![A-Za-z0-9])hf-[A-Za-z0-9]{34}(?![A-Za-z0-9])"), "huggingface-token"),
    (re.compile(r"(?<![A-Za-z0-9])[sr]k-live-[A-Za-z0-9]{24,247}+"), "stripe-key"),
)


def _mangled(text: str) -> Iterator[_Span]:
    for pattern, kind in _MANGLED:
        for match in pattern.finditer(text):
            if _mixed(match.group(0)):
                yield _Span(match.start(), match.end(), kind, _BY_FORMAT)
