"""Where detectors can start: every anchor of every detector (the literal start of each token
format, the words that name a secret, and their base64 forms) found in one Aho-Corasick pass
over the text (``_Hits``)."""

from __future__ import annotations

import base64
from array import array
from collections.abc import Sequence
from functools import cache
from typing import Any

from archivist.secrets.context import _SECRET_WORDS
from archivist.secrets.formats import _FORMATS, _PREFIXED

# Token formats this package reads itself (_token_formats); with the plugins' sniffs, every literal a token starts with.
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
        present = [self.found[literal] for literal in literals if literal in self.found]
        if len(present) <= 1:
            return present[0] if present else ()
        return sorted(position for positions in present for position in positions)

    def any(self, literals: tuple[str, ...]) -> bool:
        return not self.found.keys().isdisjoint(literals)
