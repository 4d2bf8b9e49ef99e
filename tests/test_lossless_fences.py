"""The lossless measure's matching of a fenced code block: its bare fence lines are markup, its lines text."""

from __future__ import annotations

import lossless

from archivist.secrets import Masker


def test_a_fenced_copy_of_a_kept_text_is_retained_line_by_line():
    kept = "F\nE  assert date(2025, 11, 8) == date(2025, 11, 10)\n1 failed in 0.12s"
    fenced = f"```\n{kept}\n```"
    assert lossless.retained(fenced, kept, Masker())
    assert lossless.retained(f"~~~~\n{kept}\n~~~~", kept, Masker())


def test_a_fenced_text_the_archive_lacks_is_not_retained():
    assert not lossless.retained("```\nE  assert False\n```", "F\n1 failed", Masker())
    assert not lossless.retained("```python\nprint(1)\n```", "print(1)", Masker())
    assert not lossless.retained("```\n```", "some text", Masker())
