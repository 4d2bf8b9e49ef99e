"""What a secret's value must not look like: placeholders, words, references, paths, numbers."""

from __future__ import annotations

import itertools
import re

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
