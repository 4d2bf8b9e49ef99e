"""Secrets: mask high-confidence secrets in text before it is stored or indexed.

Agent logs hold pasted API keys, tokens and ``.env`` contents. ``mask(text)``
returns the text with each secret replaced by a marker that names its kind and
keeps no character of the secret, ``[secret masked: github-token]``, and how
many were masked. The indexer stores, indexes and embeds only the masked text;
the source files are never touched. Masking masked text changes nothing.

An archive masks with a ``Masker`` that holds its key (``workspace.secret_key``):
each marker then carries a tag, ``[secret masked: github-token #3fa91c]``, a
digest of the secret keyed by that key, so that the same secret gets the same
marker wherever it appears and a reader can still follow a session. The key
lives beside the archive, never in it: whoever reads the archive (its SQL, its
pages, its tools) cannot test a guessed password against a tag.

What is masked, and by what:

* **Token formats** (those of Yelp's detect-secrets plugins, written here:
  its patterns backtrack, a line of 300 KB of ``eyJ`` took its JWT pattern 15 s,
  and run over whole lines): AWS access key ids (standing alone, not inside a
  longer run of base64), GitHub tokens (``ghp_ gho_ ghu_ ghs_ ghr_``), Slack
  tokens and webhook URLs, Stripe live keys, JWTs (only formally valid ones:
  header and payload decode to JSON), GitLab, npm registry, PyPI, SendGrid,
  Square and Azure storage keys. A match is widened to the end of its token,
  because several formats are a fixed-length prefix of tokens that are longer
  today (Stripe and ``sk-proj-`` keys, a JWT's signature).
* **Keys split across a line break**: a token cut short at the end of a line
  (or whole there, at a wrapping column of 60 characters or more) that goes on
  at the start of the next, as a terminal or an editor wraps it (a real line
  break, or ``\n`` escaped in JSON), is read joined, and masked in both parts.
* **Base64 that decodes to a secret**: a run of base64 that decodes to text in
  which a secret is found (``echo QVdTX1NFQ1JFVF9BQ0NFU1NfS0VZPS4uLg== | base64
  -d``, a credentials file pasted encoded) is masked whole, as ``base64-<kind>``.
* **More expressions**, for what detect-secrets does not cover or covers
  partly: private key blocks from ``-----BEGIN ... PRIVATE KEY-----``
  through ``END`` across lines, also JSON-escaped or cut short (it flags the
  header line only); GitHub fine-grained tokens (``github_pat_``); OpenAI keys
  without the marker (``sk-``, ``sk-proj-``, ``sk-svcacct-``, ``sk-admin-``);
  Anthropic keys (``sk-ant-``); Google API keys (``AIza``); Hugging Face tokens
  (``hf_``); AWS secret keys and session tokens assigned to their names, quoted
  or not (``~/.aws/credentials``, ``.env``, ``aws sts`` JSON output; its own
  pattern wants quotes and the word aws nearby); bearer, token and basic
  credentials in ``Authorization`` headers; the password of a URL
  (``scheme://user:password@host``: only the password is masked; its basic-auth
  plugin misses passwords holding ``!$&*`` and other characters a URL allows);
  and assignments whose name says secret (``DB_PASSWORD=...``, ``export
  NPM_TOKEN=...``, ``"apiKey": "..."``, ``client_secret: '...'``,
  ``--password=...``), where only the value is masked. Its keyword plugin does
  this with far more false positives.

A masked span that several detectors found is counted once, and named by the
most specific: ``OPENAI_API_KEY=sk-proj-...`` is one ``openai-api-key``.

Never masked: prose, code identifiers, git SHAs, sha256 and other hex digests,
UUIDs, URLs without a password, code that reads a secret (``os.environ[...]``,
``settings.SECRET_KEY``, ``f"Bearer {token}"``, ``process.env.API_KEY``),
placeholders (``sk-...``, ``<your-key>``, ``xxxx``, ``changeme``, ``${TOKEN}``,
``$OPENAI_API_KEY``, ``{{ secrets.TOKEN }}``, AWS's documented ``...EXAMPLE``
keys), and, after a name or in a header, values shorter than six characters,
numbers, versions, paths and words: such a value must hold a digit or a symbol,
or be long and switch case often, as generated keys and chosen passwords do.

Why not a scanner as a library: detect-secrets, the widely used pure-Python
scanner, was used so until its patterns stalled on hostile lines (above); its
formats are kept. The alternatives looked at cover less: Microsoft's
``microsoft-security-utilities-secret-masker`` (beta) knows Azure key formats
but none of AWS, GitHub, OpenAI, Anthropic, Slack or Stripe; ``ggshield`` needs
GitGuardian's service; ``trufflehog3`` and ``whispers`` scan repositories from
the command line; ``presidio`` and ``llm-guard`` bring spaCy or transformers.

Speed: this runs on every message and every workspace document at index time.
One Aho-Corasick pass (``_Hits``, ahocorasick-rs) finds where every anchor of
every detector stands: the literal start of each token format, the words that
name a secret, ``://``, ``PRIVATE KEY``, ``Authorization``, and the base64 forms
of what a secret's text holds. A detector runs only where its anchors are, a
pattern matched at each one, and each stretch of text is read once (a match, or
a value, covers the anchors inside it), so text that cannot hold a secret costs
that one pass, about 250 MB/s on the markdown of ``../shared/eval``
(``bench/mask_speed.py``), and a hostile line of nothing but anchors costs time
in proportion to its length. Lengths are bounded so that a long run of base64
costs no more than a scan.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import itertools
import json
import re
from array import array
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import Any, NamedTuple
from urllib.parse import unquote

MARKER = "[secret masked: {kind}]"
TAGGED_MARKER = "[secret masked: {kind} #{tag}]"
TAG_CHARS = 6  # hex digits of a secret's keyed digest in its marker: 24 bits, unique enough in one archive
_UNWRAPPED = re.compile(r"\r|\n|\\r|\\n")  # what a wrapped secret holds that the secret does not
# Bump when what is masked changes: sources are then stored again, masked the new way.
RULES_VERSION = 2

# When two detections overlap, the one with the lower rank names the kind: a
# token format says more than the header or assignment it sits in.
_BY_FORMAT, _BY_CONTEXT, _BY_NAME = 0, 1, 2


def marker(kind: str, tag: str | None = None) -> str:
    """The text that replaces one secret of ``kind`` (with its tag, under a key)."""
    return MARKER.format(kind=kind) if tag is None else TAGGED_MARKER.format(kind=kind, tag=tag)


class _Span(NamedTuple):
    start: int
    end: int
    kind: str
    rank: int


class Masker:
    """Masks texts for one archive: each secret becomes a marker that names its kind and, with
    a key, a tag that the same secret always gets (a keyed digest: ``TAGGED_MARKER``).

    ``count`` adds up the secrets masked by ``__call__`` and ``values`` (``mask`` counts apart).
    """

    def __init__(self, key: bytes | None = None) -> None:
        self.key = key
        self.count = 0

    def mask(self, text: str) -> tuple[str, int]:
        """``text`` with each high-confidence secret replaced by its marker, and how many were."""
        if not text:
            return text, 0
        spans = sorted(_detect(text), key=lambda span: (span.start, -span.end))
        if not spans:
            return text, 0
        merged: list[_Span] = []
        for span in spans:
            if merged and span.start < merged[-1].end:
                last = merged[-1]
                kind = span.kind if span.rank < last.rank else last.kind
                merged[-1] = _Span(last.start, max(last.end, span.end), kind, min(last.rank, span.rank))
            else:
                merged.append(span)
        pieces: list[str] = []
        position = 0
        for span in merged:
            pieces.append(text[position : span.start])
            pieces.append(marker(span.kind, self._tag(text[span.start : span.end])))
            position = span.end
        pieces.append(text[position:])
        return "".join(pieces), len(merged)

    def __call__(self, text: str) -> str:
        """``text`` masked, its secrets counted in ``count``."""
        masked, found = self.mask(text)
        self.count += found
        return masked

    def name(self, text: str) -> str:
        """A name made from a path (a project folder, a session's key) masked: as text, and for
        the token formats as they stand once every other character became ``-`` (Claude Code
        names a project's folder so: ``/home/ana/ghp_x…`` → ``-home-ana-ghp-x…``)."""
        masked = self(text)
        spans = sorted(_mangled(masked), key=lambda span: span.start)
        if not spans:
            return masked
        pieces, position = [], 0
        for span in spans:
            if span.start < position:
                continue
            pieces += [masked[position : span.start], marker(span.kind, self._tag(masked[span.start : span.end]))]
            position = span.end
            self.count += 1
        return "".join(pieces) + masked[position:]

    def values(self, value: Any) -> Any:
        """Every string in ``value`` (lists and objects walked, keys too) masked, counted in ``count``."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self.values(key): self.values(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.values(item) for item in value]
        return value

    def _tag(self, secret: str) -> str | None:
        """The tag of a secret as it is, whatever form it stands in: wrapped across lines, or its '_'
        turned into '-' in a name made from a path, it gets the tag it gets whole."""
        if self.key is None:
            return None
        plain = _UNWRAPPED.sub("", secret).replace("_", "-")
        digest = hmac.new(self.key, plain.encode("utf-8", "surrogatepass"), "sha256").hexdigest()
        return digest[:TAG_CHARS]


def mask(text: str) -> tuple[str, int]:
    """``text`` with each high-confidence secret replaced by its marker (no tag), and how many were."""
    return Masker().mask(text)


# --- what a secret's value must not look like --------------------------------

_PLACEHOLDER = re.compile(
    r"xxxx|\*\*\*|\.\.\.|…|<|>|\$\{|\{\{|%\(|your|example|placeholder|redacted|changeme|change_me|"
    r"change-me|dummy|replace|insert|secret masked",
    re.IGNORECASE,
)
# Whole values that are words, not secrets.
_TRIVIAL = frozenset(
    [
        "password",
        "passwd",
        "passphrase",
        "secret",
        "secrets",
        "token",
        "apikey",
        "api_key",
        "api-key",
        "changeme",
        "letmein",
        "admin",
        "administrator",
        "root",
        "default",
        "required",
        "optional",
        "string",
        "null",
        "none",
        "nil",
        "undefined",
        "true",
        "false",
        "empty",
        "unknown",
        "hidden",
        "masked",
        "secure",
        "private",
        "public",
        "sample",
        "testing",
        "test1234",
        "password1",
        "password123",
        "qwerty",
        "abcdefgh",
        "hunter2",
    ]
)
# A reference to a variable or a call, never a literal: settings.SECRET_KEY, process.env.TOKEN,
# os.environ["X"], get_token(), OTHER_VAR.
_CALL = re.compile(r"[A-Za-z_][\w.]*[(\[]")
# A name or a chain of names, when it does not mix cases and digits as a key does.
_NAME_CHAIN = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$")
_PATH = re.compile(
    r"(?:~|\.{1,2})?/[\w.-]+/|[A-Za-z]:\\|[\w./-]+\.(?:json|ya?ml|pem|key|crt|p12|txt|env|toml|ini|cfg)$"
)
_NUMBER = re.compile(r"[~^<>=v]*[0-9][0-9_.,:+-]*$")  # 4096, 129_595, 12:30, ^9.0.9
_SYMBOLS = frozenset("!#$%&*+=@^~")


def _placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.search(value)) or len(set(value)) < 4


def _plausible_value(value: str, min_length: int = 6) -> bool:
    """Whether what an assignment, header or URL holds looks like a secret, not a word or a reference.

    It must hold a digit or a symbol, or be long and switch case often, as generated keys and
    chosen passwords do: ``my-secret``, ``same-origin``, ``lastToken``, ``X-Access-Token`` are words.
    """
    if len(value) < min_length or _NUMBER.match(value) or _placeholder(value):
        return False
    if any(char.isspace() for char in value) or value[0] in "$%{<[(@#":
        return False
    code = value.rstrip("!?,;")  # process.env.API_KEY!, in TypeScript
    if value.lower() in _TRIVIAL or _CALL.match(code) or _PATH.match(value):
        return False
    if _NAME_CHAIN.match(code) and ("." in code or "_" in code) and not _mixed(code):
        return False
    if any(char.isdigit() for char in value) or not _SYMBOLS.isdisjoint(code):
        return True
    # Letters only: a generated key switches case often, a camelCase or Title-Case name seldom.
    switches = sum(a.isupper() != b.isupper() for a, b in itertools.pairwise(value) if a.isalpha() and b.isalpha())
    return len(value) >= 20 and switches >= 6


def _mixed(value: str) -> bool:
    """Upper case, lower case and digits: what a random key of some length always has."""
    return (
        any(char.isdigit() for char in value)
        and any(char.islower() for char in value)
        and any(char.isupper() for char in value)
    )


# --- detectors written here --------------------------------------------------

_PRIVATE_KEY = re.compile(
    r"-----BEGIN[ A-Z0-9]*? PRIVATE KEY(?: BLOCK)?-----"
    r"(?:(?P<body>.{0,65536}?)-----END[ A-Z0-9]*? PRIVATE KEY(?: BLOCK)?-----"
    # A block pasted without its end: the header and the lines of key that follow it.
    r"|(?P<open>(?:(?:\\r)?(?:\\n|\n)[ \t]*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: [^\r\n\\]*))+))",
    re.DOTALL,
)
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/]{32}")


def _private_keys(text: str) -> Iterator[_Span]:
    for match in _PRIVATE_KEY.finditer(text):
        body = match.group("body") if match.group("body") is not None else match.group("open")
        if body and _KEY_MATERIAL.search(body):
            yield _Span(match.start(), match.end(), "private-key", _BY_FORMAT)


def _token_formats(text: str, hits: _Hits) -> Iterator[_Span]:
    """The formats read here, each tried only where its prefix stands (``_anchors``)."""
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
_ANTHROPIC = re.compile(
    r"(?<![A-Za-z0-9_-])sk-ant-[a-z]{2,10}[0-9]{0,3}-(?P<body>[A-Za-z0-9_-]{32,300}+)(?![A-Za-z0-9_-])"
)
_OPENAI = re.compile(
    r"(?<![A-Za-z0-9_-])sk-(?!ant-)(?:(?:proj|svcacct|admin)-)?(?P<body>[A-Za-z0-9_-]{32,300}+)(?![A-Za-z0-9_-])"
)
_HUGGING_FACE = re.compile(r"(?<![A-Za-z0-9_-])hf_[A-Za-z0-9]{34}(?![A-Za-z0-9_-])")
_PREFIXED = (
    (
        "github_pat_",
        re.compile(r"github_pat_[A-Za-z0-9]{20,40}_[A-Za-z0-9_]{30,120}+(?![A-Za-z0-9_-])"),
        "github-token",
    ),
    # Bounded on both sides: inside a long base64 blob (a font, a wasm module) "AIza" is chance.
    ("AIza", re.compile(r"(?<![A-Za-z0-9+/_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9+/=_-])"), "google-api-key"),
)

_AUTHORIZATION = re.compile(
    r"authorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?(?P<scheme>bearer|token|basic)[ \t]+(?P<value>[A-Za-z0-9._~+/=-]+)",
    re.IGNORECASE,
)


def _authorization(text: str) -> Iterator[_Span]:
    for match in _AUTHORIZATION.finditer(text):
        value = match.group("value")
        if len(value) < 12 or not _plausible_value(value):
            continue
        if sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value))) < 2:
            continue
        kind = "basic-auth" if match.group("scheme").lower() == "basic" else "bearer-token"
        yield _Span(match.start("value"), match.end("value"), kind, _BY_CONTEXT)


_URL_USERINFO = re.compile(r"(?P<user>[^\s:/?#@\[\],\"'<>\\]*):(?P<password>[^\s/?#@\[\],\"'<>\\]+)@(?=[A-Za-z0-9\[])")
_PORT = re.compile(r"[0-9]{1,5}$")


def _url_password(password: str, user: str) -> bool:
    """Whether the password of a URL is one: where it stands says so, unless it is a placeholder."""
    if password == user or _PORT.match(password):
        return False
    if password.isalpha():  # letters only: long enough, and not mypassword, secret, ...
        lowered = password.lower()
        return len(password) >= 8 and not any(word in lowered for word in ("pass", "secret", "pwd", "token"))
    return _plausible_value(password, min_length=4)


def _url_passwords(text: str) -> Iterator[_Span]:
    position = text.find("://")
    while position != -1:
        if position and text[position - 1].isalnum():
            match = _URL_USERINFO.match(text, position + 3)
            if match:
                password = unquote(match.group("password"))
                if _url_password(password, unquote(match.group("user"))):
                    yield _Span(match.start("password"), match.end("password"), "url-password", _BY_CONTEXT)
        position = text.find("://", position + 3)


# An assignment whose name ends with a word that says secret: DB_PASSWORD=..., PGPASSWORD=...,
# export GITHUB_TOKEN=..., "apiKey": "...", client_secret: '...', --password=..., SECRET_KEY_BASE=...
# Candidates are matched where ``_anchors`` found each word (lower, upper or title case); the name is
# then read back to its start.
_SECRET_WORDS = ("pass", "pwd", "secret", "token", "key", "credential")
_ASSIGNED = r"[a-z0-9_-]{0,80}+(?P<close>\\?[\"']?)(?P<op>[ \t]*(?::=|=(?!=)|:(?!:))[ \t]*)"
_CANDIDATES_ANY_CASE = tuple(re.compile(word + _ASSIGNED, re.IGNORECASE) for word in _SECRET_WORDS)
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_SECRET_ENDINGS = (
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "secrets",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "secretkey",
    "authkey",
    "masterkey",
    "signingkey",
    "encryptionkey",
    "credential",
    "credentials",
    "keybase",
)
# Quoted values have a bound, read possessively: a quote never closed costs that much, not the rest of
# the text for every name before it (a line of ``pass="pass="…`` in quadratic time).
_VALUE = re.compile(
    r"\\\"(?P<escaped>[^\"\\\n]{0,4096}+)\\\"|\"(?P<double>[^\"\n]{0,4096}+)\"|'(?P<single>[^'\n]{0,4096}+)'"
    r"|(?P<bare>[^\s\"'`&,;()\[\]{}<>]++)(?![(\[{<])"
)
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*$")
_AWS_SECRET = re.compile(r"[A-Za-z0-9/+]{40}$")
_AWS_SESSION = re.compile(r"[A-Za-z0-9/+=]{100,}$")
_HEX = re.compile(r"[0-9a-fA-F]+$")


def _assignments(text: str, hits: _Hits) -> Iterator[_Span]:
    if "=" not in text and ":" not in text:
        return  # every assignment has its = or :
    seen: set[int] = set()
    done = -1  # where the last value read ends: a name inside a value is part of it, not a name
    candidates: list[re.Match[str]] = []
    for word, pattern in zip(_SECRET_WORDS, _CANDIDATES_ANY_CASE):
        for position in hits.of(word, word.upper(), word.title()):
            found = pattern.match(text, position)
            if found:
                candidates.append(found)
    for candidate in sorted(candidates, key=lambda match: match.start()):
        name_end = candidate.start("close")
        if name_end in seen or candidate.start() < done:
            continue  # secret_token=: found by two words; or inside a value read already
        seen.add(name_end)
        start = candidate.start()
        while start > 0 and text[start - 1] in _NAME_CHARS and name_end - start < 100:
            start -= 1
        if start > 0 and text[start - 1] in "${%\\":
            continue  # ${DB_PASSWORD}, $TOKEN: a reference, not a name being given a value
        name = text[start:name_end].lstrip("-").lower()
        plain = name.replace("_", "").replace("-", "")
        if not (plain.endswith(_SECRET_ENDINGS) or name.endswith(("_pass", "-pass")) or name == "pass"):
            continue
        value_match = _VALUE.match(text, candidate.end())
        if not value_match:
            continue
        done = value_match.end()
        group = next(g for g in ("escaped", "double", "single", "bare") if value_match.group(g) is not None)
        value = value_match.group(group)
        span_start, span_end = value_match.start(group), value_match.end(group)
        aws = "aws" in plain or plain in ("secretaccesskey", "sessiontoken")
        if aws and plain.endswith(("secretaccesskey", "secretkey")) and _AWS_SECRET.match(value):
            if not (_HEX.match(value) or _placeholder(value) or value.lower() == value or value.upper() == value):
                yield _Span(span_start, span_end, "aws-secret-key", _BY_FORMAT)
            continue
        if aws and plain.endswith("sessiontoken") and _AWS_SESSION.match(value):
            if not _placeholder(value):
                yield _Span(span_start, span_end, "aws-session-token", _BY_FORMAT)
            continue
        if group == "bare":
            op = candidate.group("op")
            if candidate.group("close"):
                continue  # a quoted name takes a quoted value
            if "=" in op and op.strip() != op:
                continue  # KEY = thing: code, whose literals are quoted
            if "=" not in op and not _ENV_NAME.match(text[start:name_end].lstrip("-")):
                continue  # password: word, in prose or YAML; only ENV_STYLE names take bare values
        if _plausible_value(value):
            yield _Span(span_start, span_end, _assignment_kind(plain), _BY_NAME)


def _assignment_kind(plain_name: str) -> str:
    if "pass" in plain_name or plain_name.endswith("pwd"):
        return "password"
    if plain_name.endswith("token"):
        return "token"
    if plain_name.endswith("apikey"):
        return "api-key"
    return "secret"


# --- token formats found where their anchor stands ------------------------------

_TAIL = re.compile(r"[A-Za-z0-9_-]*")
_JWT_TAIL = re.compile(r"[A-Za-z0-9_.+/=-]*")
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


class _Format(NamedTuple):
    """A token format: matched where one of its anchors stands (``offset`` characters after it), then
    widened to the end of its token (``tail``; None: not widened, and it must stand alone, not
    inside a longer run of base64, where AKIA and 16 capitals and digits is chance)."""

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


def _library(text: str, hits: _Hits) -> Iterator[_Span]:
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
                if before in _BASE64 or after in _BASE64 or after == "=":
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


# --- where detectors can start: one pass over the text --------------------------

# Token formats this module reads itself; with the plugins' sniffs, every literal a token starts with.
_OWN_PREFIXES = ("sk-", "hf_", *(anchor for anchor, _, _ in _PREFIXED))
_TOKEN_PREFIXES = (*_OWN_PREFIXES, *dict.fromkeys(literal for form in _FORMATS for literal in form.anchors))
# What the other detectors need the text to hold, in the cases people write them.
_AUTHORIZATION_WORDS = ("authorization", "Authorization", "AUTHORIZATION")
_WORDS = tuple(form for word in _SECRET_WORDS for form in (word, word.upper(), word.title()))
_CONTEXT = ("PRIVATE KEY", "://", *_AUTHORIZATION_WORDS, *_WORDS)
# Plain text that a secret's text holds, as it stands in base64 (``_encoded_forms``).
_ENCODED_WORDS = (
    *(prefix for prefix in _TOKEN_PREFIXES if len(prefix) >= 4),
    "PRIVATE KEY",
    "uthorization",
    "://",
    *(form for word in ("pass", "secret", "token", "credential") for form in (word, word.upper(), word.title())),
    "_key",
    "_KEY",
    "Key=",
    "key=",
    "KEY=",
)
ENCODED = "base64"  # the name under which the encoded forms are found


def _encoded_forms(word: str) -> set[str]:
    """The base64 characters that ``word`` becomes wherever it stands (3 alignments), at least 4 long."""
    forms = set()
    data = word.encode()
    for offset in range(3):
        encoded = base64.b64encode(b"\x00" * offset + data + b"\x00\x00").decode()
        first = -(-offset * 8 // 6)  # the first character made of the word's bits alone
        last = (offset + len(data)) * 8 // 6  # past the last one
        if last - first >= 4:
            forms.add(encoded[first:last])
    return forms


@cache
def _automaton() -> tuple[Any, tuple[str, ...], int]:
    """Every anchor in one Aho-Corasick automaton, what each of its patterns stands for, and the
    longest pattern's length.

    A text is scanned once, for all of them, instead of once per detector: ahocorasick-rs
    (the Rust aho-corasick crate, as a DFA) reads 39 MB of markdown for 217 patterns in
    0.09 s, where pyahocorasick took 0.65 s and one ``str.find`` per pattern 1.2 s.
    """
    import ahocorasick_rs

    patterns: dict[str, str] = {literal: literal for literal in (*_TOKEN_PREFIXES, *_CONTEXT)}
    for word in _ENCODED_WORDS:
        for form in _encoded_forms(word):
            patterns.setdefault(form, ENCODED)
    automaton = ahocorasick_rs.AhoCorasick(list(patterns), implementation=ahocorasick_rs.Implementation.DFA)
    return automaton, tuple(patterns.values()), max(map(len, patterns))


HITS_WINDOW = 1 << 20  # characters scanned at a time: the automaton's list of hits is made per window


class _Hits:
    """Where each anchor stands in one text (its start positions, ascending).

    Kept as arrays of 8 bytes a hit, and found a window at a time: a text of nothing but
    anchors (a hostile line of ``sk-sk-sk-…``) costs memory in proportion to its length,
    never a list of tuples per hit for the whole text.
    """

    def __init__(self, text: str) -> None:
        self.found: dict[str, array[int]] = {}
        automaton, meanings, longest = _automaton()
        for start in range(0, len(text), HITS_WINDOW):
            end = start + HITS_WINDOW
            window = text if start == 0 and end >= len(text) else text[start : end + longest - 1]
            for pattern, at, _ in automaton.find_matches_as_indexes(window, overlapping=True):
                if at < HITS_WINDOW:  # (one that starts past the window is the next window's)
                    found = self.found.get(meanings[pattern])
                    if found is None:
                        found = self.found[meanings[pattern]] = array("q")
                    found.append(start + at)

    def of(self, *literals: str) -> Sequence[int]:
        if len(literals) == 1:
            return self.found.get(literals[0], ())
        return sorted(position for literal in literals for position in self.found.get(literal, ()))

    def any(self, literals: tuple[str, ...]) -> bool:
        return any(literal in self.found for literal in literals)


# --- keys wrapped across lines, and secrets encoded in base64 -------------------

_TOKEN_RUN = re.compile(r"[A-Za-z0-9_+/=.-]*")
_LINE_BREAK = re.compile(r"\r?\n|\\r\\n|\\n")  # a line break, or one escaped in JSON text
WRAP_COLUMN = 60  # a line at least this long that ends with a whole token may have been wrapped in it
WRAPPED_LINES = 8  # lines a wrapped token may run over
MAX_TOKEN = 4096  # characters of one line's part of a token (a JWT's is the longest): a longer run is no key


def _wrapped(text: str, hits: _Hits) -> Iterator[_Span]:
    """Tokens that a terminal or an editor wrapped across lines, found by reading them joined.

    A token cut short on its line (no detector finds it whole there) goes on at the start of
    the next; one that is whole on its line goes on only where that line is as long as a
    wrapping column (else the next line's first word is a word).
    """
    examined = -1  # where the last run looked at ends: each run of token characters is looked at once
    for position in hits.of(*_TOKEN_PREFIXES):
        if position < examined or (position and text[position - 1].isalnum()):
            continue  # inside a run already looked at, or inside a word (task-list): no token starts there
        pieces = [(position, _TOKEN_RUN.match(text, position).end())]  # type: ignore[union-attr]
        examined = pieces[0][1]
        if pieces[0][1] - position > MAX_TOKEN or not _LINE_BREAK.match(text, pieces[0][1]):
            continue
        first = text[pieces[0][0] : pieces[0][1]]
        whole = any(span.start == 0 and span.end == len(first) for span in _token_spans(first))
        while len(pieces) < WRAPPED_LINES:
            end = pieces[-1][1]
            brk = _LINE_BREAK.match(text, end)
            if brk is None or (whole and end - _line_start(text, pieces[-1][0]) < WRAP_COLUMN):
                break
            follow = _TOKEN_RUN.match(text, brk.end()).end()  # type: ignore[union-attr]
            if follow == brk.end() or follow - brk.end() > MAX_TOKEN:
                break
            pieces.append((brk.end(), follow))
            examined = follow
        if len(pieces) == 1:
            continue
        joined = "".join(text[a:b] for a, b in pieces)
        offsets = list(itertools.accumulate(b - a for a, b in pieces))
        for span in _token_spans(joined):
            if span.start < offsets[0] < span.end:  # it runs past the first line: the wrap matters
                yield _Span(position + span.start, _unjoined(span.end, pieces, offsets), span.kind, span.rank)


def _token_spans(text: str) -> Iterator[_Span]:
    hits = _Hits(text)
    return itertools.chain(_library(text, hits), _token_formats(text, hits))


def _line_start(text: str, position: int) -> int:
    """Where the line holding ``position`` starts: after a line break, or one escaped in JSON."""
    return max(text.rfind("\n", 0, position) + 1, text.rfind("\\n", 0, position) + 2 if "\\n" in text else 0)


def _unjoined(position: int, pieces: list[tuple[int, int]], offsets: list[int]) -> int:
    """Where a position in the joined token is in the text."""
    before = 0
    for (start, _), through in zip(pieces, offsets):
        if position <= through:
            return start + position - before
        before = through
    return pieces[-1][1]


_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_PRINTABLE = bytes(range(0x20, 0x7F)) + b"\t\n\r"
ENCODED_DEPTH = 2  # base64 inside base64, at most
MIN_ENCODED = 16  # characters of base64 that can hold a secret's text
MAX_ENCODED = 16384  # longer runs are files (images, archives), not a pasted secret


def _encoded(text: str, hits: _Hits, depth: int) -> Iterator[_Span]:
    """Runs of base64 that decode to text holding a secret: each masked whole.

    Only runs around the base64 form of what a secret's text holds (``_ENCODED_WORDS``) are
    decoded: a run without one cannot hold a secret that any detector here would find.
    """
    done = -1
    for position in hits.of(ENCODED):
        if position < done:
            continue
        start, end = position, position
        while start > 0 and text[start - 1] in _BASE64_CHARS and position - start <= MAX_ENCODED:
            start -= 1
        while end < len(text) and text[end] in _BASE64_CHARS and end - position <= MAX_ENCODED:
            end += 1
        done = end
        padded = end
        while padded < len(text) and padded - end < 2 and text[padded] == "=":
            padded += 1
        if not MIN_ENCODED <= end - start <= MAX_ENCODED or (start and text[start - 1] in "-_"):
            continue
        try:
            decoded = base64.b64decode(text[start:end] + "=" * (-(end - start) % 4), validate=True)
        except (binascii.Error, ValueError):
            continue
        if len(decoded.translate(None, _PRINTABLE)) * 50 > len(decoded):
            continue  # bytes, not text: the word's form stood there by chance
        inner = next(_detect(decoded.decode("ascii", "replace"), depth + 1), None)
        if inner is not None:
            yield _Span(start, padded, f"base64-{inner.kind.removeprefix('base64-')}", _BY_FORMAT)


def _detect(text: str, depth: int = 0) -> Iterator[_Span]:
    hits = _Hits(text)
    if not hits.found:
        return  # nothing a secret starts with, nor the words that name one
    yield from _library(text, hits)
    yield from _token_formats(text, hits)
    if "\n" in text or "\\n" in text:
        yield from _wrapped(text, hits)
    if depth < ENCODED_DEPTH and hits.of(ENCODED):
        yield from _encoded(text, hits, depth)
    if not hits.any(_CONTEXT):
        return
    if hits.of("PRIVATE KEY"):
        yield from _private_keys(text)
    if hits.any(_AUTHORIZATION_WORDS):
        yield from _authorization(text)
    if hits.of("://") and "@" in text:
        yield from _url_passwords(text)
    if hits.any(_WORDS):
        yield from _assignments(text, hits)
