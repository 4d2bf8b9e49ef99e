"""What a detector finds (a span of text, the kind of secret, the rank that names it among
overlapping finds), and what it is given of the one pass over the text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

# When two detections overlap, the one with the lower rank names the kind: a
# token format says more than the header or assignment it sits in.
_BY_FORMAT, _BY_CONTEXT, _BY_NAME = 0, 1, 2


class _Span(NamedTuple):
    start: int
    end: int
    kind: str
    rank: int


class _Anchored(Protocol):
    """Where each anchor stands in the text, as a detector asks it (``anchors._Hits``)."""

    def of(self, *literals: str) -> Sequence[int]: ...
