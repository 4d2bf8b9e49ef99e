"""Lossless, by measure: every string a kind's sample holds reaches the archive, or stands on that kind's
written list of what is dropped on purpose and why (its ``[dropped]`` table in archivist/agents/<kind>/kind.toml).

Each sample is indexed once by the real indexer; its strings (``lossless.held``) are looked up in what the
archive stores for its sessions (``lossless.kept``). For the JSONL kinds, a property test writes the texts
their readers read (message text, thinking, tool input and output) anew and finds each in the archive.
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import lossless
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archivist.agents import registry

SAMPLES = lossless.samples()

# Where each JSONL kind's reader reads texts, in its sample's files: file name pattern, key-path patterns.
READ_TEXTS = {
    "claude-code": (
        "3f6d2b1e-*.jsonl",
        (
            "*.jsonl:message.content[].text",
            "*.jsonl:message.content[].thinking",
            "*.jsonl:message.content[].input.command",
            "*.jsonl:message.content[].content[].text",
        ),
    ),
    "qwen-code": ("*.jsonl", ("*.jsonl:message.parts[].text", "*.jsonl:message.parts[].functionCall.args.*")),
    "windsurf": ("*.jsonl", ("*.jsonl:user_input.user_response", "*.jsonl:planner_response.response")),
    "copilot": ("events.jsonl", ("events.jsonl:data.content",)),
}
WORDS = st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "Zs"]), min_size=1, max_size=80)


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    return lossless.index_sources(tmp_path_factory.mktemp("lossless") / "workspace", SAMPLES)


def test_every_kind_declares_what_it_drops():
    for kind in registry.kinds(registry.manager(entry_points=False)):
        assert lossless.dropped(kind), f"{kind}: no [dropped] table"


def test_a_dropped_table_of_the_wrong_shape_is_refused(tmp_path, monkeypatch):
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "kind.toml").write_text('name = "odd"\n[dropped]\n"*:id" = 3\n', encoding="utf-8")
    monkeypatch.setattr(lossless, "KINDS_FOLDER", tmp_path)
    with pytest.raises(ValueError, match=r"odd/kind.toml: \[dropped\]"):
        lossless.dropped("odd")


@pytest.mark.parametrize("kind", SAMPLES)
def test_every_string_of_the_sample_is_kept_or_declared_dropped(kind, archive):
    tally = lossless.measure(lossless.held(SAMPLES[kind]), lossless.kept(archive, kind), lossless.dropped(kind))
    lost = [f"{kind} {string.where}: {string.text[:80]!r}" for string in tally.lost_strings or []]
    assert lost == [], "neither kept nor declared dropped:\n" + "\n".join(lost)
    assert tally.retained > 0


@pytest.mark.parametrize("kind", SAMPLES)
def test_every_dropped_pattern_names_a_string_of_the_sample(kind):
    """A pattern that names nothing is a stale excuse: each one must still name a string the sample holds."""
    strings = list(lossless.held(SAMPLES[kind]))
    patterns = lossless.dropped(kind)
    unused = [pattern for pattern in patterns if not any(lossless.declared(s, {pattern: ""}) for s in strings)]
    assert unused == []


def test_a_string_the_archive_lacks_is_lost(archive):
    (kind,) = ["claude-code"]
    made = lossless.Held("a.jsonl:message.content[].text", "a sentence no session of the samples holds")
    tally = lossless.measure(iter([made]), lossless.kept(archive, kind), lossless.dropped(kind))
    assert (tally.lost, tally.lost_strings) == (len(made.text), [made])


@pytest.mark.parametrize("kind", READ_TEXTS)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(WORDS, min_size=1, max_size=12))
def test_the_texts_a_reader_reads_are_kept_whatever_they_say(kind, texts, tmp_path_factory):
    folder = tmp_path_factory.mktemp(kind)
    source = folder / SAMPLES[kind].name  # as the kind names its folder (transcripts, projects)
    shutil.copytree(SAMPLES[kind], source)
    glob, patterns = READ_TEXTS[kind]
    fresh = (f"lossless{n} {text}" for n, text in zip(itertools.count(), itertools.cycle(texts)))
    made = [text for file in sorted(source.rglob(glob)) for text in lossless.rewrite_lines(file, patterns, fresh)]
    assert made
    archive = lossless.index_sources(folder / "workspace", {kind: source})
    kept = lossless.kept(archive, kind)
    masker = lossless.Masker()
    assert [text for text in made if not lossless.retained(text, kept, masker)] == []
