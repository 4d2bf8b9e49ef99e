"""The filter words of a document or a message, as the FTS ``filter_tokens`` column holds them."""

from __future__ import annotations

from typing import Any

from archivist import vocabulary


def filter_tokens(document: dict[str, Any]) -> str:
    """Words for the FTS ``filter_tokens`` column, so a MATCH can filter as it searches.

    The words of the document's facts (``vocabulary.words``: kind, type and date as
    compound words such as ``krecordt627567m202405``, then product, tags, and a
    conversation's agent, project, models and files), space-separated. A message of an
    agent log (``dated_names``) also has its agent's and project's words with each of
    its dates; a session past midnight (``more_days``) each of its days.
    """
    return " ".join(vocabulary.words(document))
