"""Text made valid Unicode where it enters: a lone surrogate becomes U+FFFD.

A lone surrogate (U+D800 to U+DFFF alone) is no character: UTF-8 cannot write it, so SQLite,
the secret scanner and every page refuse it. It enters through a JSON escape (``"\\ud800"``:
JavaScript writes one where a string was cut between the two halves of an emoji, so logs
written by Node hold them) and through a file name that is not UTF-8 (Python names it with
surrogates, ``surrogateescape``). Each reading replaces them once, before masking, storing or
searching, and tells how many it replaced (``agents.valid_session``, ``documents.storable``).
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> tuple[str, int]:
    """``text`` with each lone surrogate replaced by U+FFFD, and how many were."""
    if text.isascii():
        return text, 0  # the common case, at C speed
    try:
        text.encode("utf-8")  # ten times faster than the pattern, where nothing is to change
        return text, 0
    except UnicodeEncodeError:
        pass
    return _SURROGATE_RE.subn(REPLACEMENT, text)


def valid(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD."""
    return valid_unicode(text)[0]
