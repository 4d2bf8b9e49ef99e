"""What a message is searched by: its text, and the commands and files of its tool calls.

A message that only ran ``pytest -x`` or edited ``auth/session.py`` says so in no word of its
text: searching "pytest" or "session.py" found nothing where the agent did it. The message's
words in ``message_index`` are its text followed by a line for each of its calls' commands and
files (never their output, which stays out of the search); the excerpt of a message found by
them is made from the same text (the SQL function ``archivist_searched``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any


def call_words(calls: Iterable[Mapping[str, Any]]) -> str:
    """The commands and files of ``calls`` (``messages.tool_calls`` rows), a line for each call that has any."""
    lines = []
    for call in calls:
        said = [str(part) for key in ("commands", "files") for part in call.get(key) or () if str(part).strip()]
        if said:
            lines.append(" ".join(said))
    return "\n".join(lines)


def searched_text(text: str, words: str) -> str:
    """What ``message_index`` holds of a message: its text, then its calls' words (``call_words``)."""
    if not words:
        return text
    return f"{text}\n{words}" if text.strip() else words


def stored_searched_text(text: str | None, tool_calls: str | None) -> str:
    """``searched_text`` of a stored message: its text and its ``tool_calls`` column (JSON)."""
    try:
        calls = json.loads(tool_calls) if tool_calls else []
    except ValueError:
        calls = []
    rows = [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []
    return searched_text(text or "", call_words(rows))
