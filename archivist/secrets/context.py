"""Secrets known by what stands around them: private key blocks, ``Authorization`` headers,
the password of a URL, and assignments whose name says secret."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import unquote

from archivist.secrets.spans import _BY_CONTEXT, _BY_FORMAT, _BY_NAME, _Anchored, _Span
from archivist.secrets.values import _placeholder, _plausible_value

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
# Candidates are matched where ``anchors._Hits`` found each word (lower, upper or title case); the name is
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


def _assignments(text: str, hits: _Anchored) -> Iterator[_Span]:
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
