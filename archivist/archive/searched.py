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


def searched_text(text: str, calls: Iterable[Mapping[str, Any]]) -> str:
    """``text``, then one line for each call's commands and files (``messages.tool_calls`` rows)."""
    lines = [text] if text.strip() else []
    for call in calls:
        said = [str(part) for key in ("commands", "files") for part in call.get(key) or () if str(part).strip()]
        if said:
            lines.append(" ".join(said))
    return "\n".join(lines)


def stored_searched_text(text: str | None, tool_calls: str | None) -> str:
    """``searched_text`` of a stored message: its text and its ``tool_calls`` column (JSON)."""
    try:
        calls = json.loads(tool_calls) if tool_calls else []
    except ValueError:
        calls = []
    rows = [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []
    return searched_text(text or "", rows)
