"""Property-based fuzzing of every MCP tool and the HTTP surfaces (docs/errors.md): bad input gets a clear error.

Every tool is called in-process through the MCP SDK's own client, on a disposable copy of the
embedded sample workspace, and the HTTP surfaces through the Datasette app, with inputs from
tests/fuzzing.py (also used by bench/fuzz.py, the long run): a catalogue (each nasty value in
each parameter, in turn) and hypothesis examples. Whatever the input, a call answers within
CALL_TIMEOUT seconds; an error is the error body (docs/errors.md) with a known code and never INTERNAL_ERROR (over
HTTP: a 400, never a 5xx); no answer carries raw SQL, an SQLite error or a traceback; a
workspace outside the allowed one is refused and left untouched. Hypothesis runs are
derandomized: a failure comes back on every run, shrunk to a minimal example.

The agent logs of every kind registered are fuzzed here too, through the kind's sample
(tests/fuzzing.py: ``log_damage``): a copy damaged in one file (renamed with bytes that are not
UTF-8; cut, a line cut short, bytes that are not UTF-8, NUL and control bytes, brackets never
closed, lines reordered; a value of another type, huge, nested deeply, or hostile text with lone
surrogates escaped in JSON; a store's cell of another storage class, huge, deep or hostile, a
row deleted, the file truncated, a page of garbage) and indexed as a source: no exception, no
hang, no text stored that is not UTF-8, and every session the damaged file does not hold is stored.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import started_datasette
from fuzzing import (
    BASE_CALLS,
    CORE,
    CORE_STRINGS,
    EMBEDDING_TOOLS,
    FORM_DAMAGES,
    PROPERTIES,
    SAMPLE_FORMS,
    TOOLS,
    Caller,
    Place,
    Violation,
    catalogue,
    damages_of,
    http_catalogue,
    http_requests,
    index_log_damage,
    log_damage,
    log_kinds,
    log_sample,
    parameters,
    prepare_place,
    sample_keys,
    tool_arguments,
    written_outside,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archivist.workspace import archive_path

CALL_TIMEOUT = 10.0  # seconds: the bound on any one call (the model is loaded before the first)
EXAMPLES_PER_TOOL = 100
HTTP_EXAMPLES = 100
FUZZ = settings(
    max_examples=EXAMPLES_PER_TOOL,
    deadline=None,
    derandomize=True,  # the same examples on every run: no flaky failures, and each comes back
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.large_base_example,
    ],
)


class PropertyFailed(AssertionError):
    """A broken property of docs/errors.md (one subclass per property, so hypothesis reports each apart)."""


FAILURES = {name: type(f"Broken_{name.replace(' ', '_')}", (PropertyFailed,), {}) for name in PROPERTIES}


def fail_on(violations: list[Violation]) -> None:
    if violations:
        first = violations[0]
        raise FAILURES[first.property](f"{first.property}: {first.detail}")


def first_of_each(found: list[tuple[Any, Violation]]) -> str:
    """The first input that broke each property, for an assertion message."""
    firsts: dict[str, tuple[Any, Violation]] = {}
    for sent, violation in found:
        firsts.setdefault(violation.property, (sent, violation))
    return "\n".join(
        f"{name}: {sent!r:.300}\n    -> {violation.detail[:300]}" for name, (sent, violation) in firsts.items()
    )


@pytest.fixture(scope="module")
def place(embedded_sample: Path, tmp_path_factory: pytest.TempPathFactory) -> Place:
    """A disposable copy of the embedded sample (the embedding tools may write to it), the sample agent logs
    indexed into it (get_conversation reads real sessions), and folders around it."""
    scratch = tmp_path_factory.mktemp("fuzz")
    workspace = scratch / "sample"
    shutil.copytree(embedded_sample, workspace)
    return prepare_place(workspace, scratch)


@pytest.fixture(scope="module")
def tools(place: Place) -> Iterator[Caller]:
    """The MCP server of ``place.workspace`` (and no other), behind the SDK's in-process client."""
    from archivist.mcp.tools import create_server

    with Caller(create_server(archive_path(place.workspace), place.workspace), timeout=120) as caller:
        warm = caller.run(
            caller.client.call_tool, "search_semantic", {"query": "authentication patterns"}
        )  # loads the model
        assert not warm.is_error, warm.content
        caller.timeout = CALL_TIMEOUT
        yield caller


@pytest.fixture(scope="module")
def site(place: Place) -> Iterator[tuple[Caller, Any]]:
    """The Datasette app as `archivist serve` runs it, and a caller for its async client."""
    with Caller(timeout=120) as caller:
        datasette = caller.run(started_datasette, archive_path(place.workspace))
        warm = caller.run(
            datasette.client.get, "/archive/search_semantic.json", params={"query": "authentication patterns"}
        )
        assert warm.status_code == 200, warm.text[:300]
        caller.timeout = CALL_TIMEOUT
        yield caller, datasette


def test_the_fuzzed_parameters_are_the_tools_parameters(tools: Caller, place: Place) -> None:
    listed = {tool.name: tool for tool in tools.run(tools.client.list_tools).tools}
    assert set(TOOLS) <= set(listed)
    for name in TOOLS:
        assert set(listed[name].input_schema["properties"]) == set(parameters(name, place)), name


@pytest.mark.parametrize("tool", TOOLS)
@FUZZ
@given(data=st.data())
def test_every_tool_answers_hostile_arguments_with_a_result_or_a_clear_error(
    tools: Caller, place: Place, tool: str, data: st.DataObject
) -> None:
    arguments = data.draw(tool_arguments(tool, place), label="arguments")
    _, violations = tools.call_tool(tool, arguments, place)
    fail_on(violations)


@pytest.mark.parametrize("tool", TOOLS)
def test_every_tool_answers_each_nasty_value_in_each_parameter(tools: Caller, place: Place, tool: str) -> None:
    """Deterministic: a valid call (for the embedding tools, one that must fail) with one parameter at a time
    set to NUL bytes, 300-character names, ~nouser, 70,000 characters, 3,000 words, FTS5 and SQL syntax,
    SQLite's integer edges or another JSON type."""
    found = [
        (arguments, v) for arguments in catalogue(tool, place, CORE) for v in tools.call_tool(tool, arguments, place)[1]
    ]
    if found:
        pytest.fail(first_of_each(found), pytrace=False)


def test_the_http_surfaces_answer_each_nasty_value(site: tuple[Caller, Any], place: Place) -> None:
    caller, datasette = site
    requests = http_catalogue(place, CORE_STRINGS, every_key=False)
    found = [(request, v) for request in requests for v in caller.get(datasette, *request)[1]]
    if found:
        pytest.fail(first_of_each(found), pytrace=False)


@settings(FUZZ, max_examples=HTTP_EXAMPLES)
@given(data=st.data())
def test_the_http_surfaces_answer_hostile_query_strings_without_a_500_or_a_leak(
    site: tuple[Caller, Any], place: Place, data: st.DataObject
) -> None:
    caller, datasette = site
    path, params = data.draw(http_requests(place), label="request")
    _, violations = caller.get(datasette, path, params)
    fail_on(violations)


# arguments each tool answers on the sample workspace: the embedding tools' base calls must fail, these embed
VALID = {**BASE_CALLS, "embed_document": {"path": "conversations"}, "embed_workspace": {}}


@pytest.mark.parametrize("tool", TOOLS)
def test_a_workspace_outside_the_allowed_one_is_refused_and_left_untouched(
    tools: Caller, place: Place, tool: str
) -> None:
    assert set(VALID) == set(TOOLS)
    written_outside(place)  # a failure of another test may have left something there
    foreign_archive = archive_path(place.foreign)
    before = foreign_archive.stat().st_mtime_ns
    refused = [str(place.bare), str(place.foreign), "/no/such/folder"]
    if tool not in EMBEDDING_TOOLS:
        refused += ["/", "~root", str(place.foreign / ".archivist")]  # never given to a tool that writes
    for folder in refused:
        result = tools.run(tools.client.call_tool, tool, {**VALID[tool], "workspace_path": folder})
        assert result.is_error, (tool, folder, result.content)
        assert result.structured_content is not None, (tool, folder, result.content)
        assert result.structured_content["code"] == "DIRECTORY_NOT_FOUND", (tool, folder, result.structured_content)
        assert not (place.bare / ".archivist").exists(), (tool, "wrote into", place.bare)
        assert list(place.bare.iterdir()) == []
        assert foreign_archive.stat().st_mtime_ns == before, (tool, "wrote into", place.foreign)
    own = tools.run(tools.client.call_tool, tool, {**VALID[tool], "workspace_path": str(place.workspace)})
    assert not own.is_error, (tool, own.content)
    assert json.loads(own.content[0].text) == own.structured_content


# --- agent logs: every kind's sample, damaged, indexed -------------------------------------------

LOG_EXAMPLES = 5  # damaged sources of each kind, any damage (bench/fuzz.py --log-examples runs hundreds)
LOG_HUGE = 200_000  # characters: the largest huge value written here (bench/fuzz.py writes MBs)
LOG_SECONDS = 30.0  # a damaged sample is indexed in a tenth of a second; a pattern gone quadratic takes hours
# The damages every kind gets on every run, whatever hypothesis draws: hostile text (lone surrogates
# escaped in JSON, NULs, controls, bytes that are not UTF-8) and, for a store, the file broken.
ALWAYS = ("hostile text", "truncated", "garbage page")


def test_every_kind_registered_has_its_sample_damaged() -> None:
    """A kind registered is fuzzed from that day: its sample's forms declared (SAMPLE_FORMS), its sample read."""
    kinds = log_kinds()
    missing = sorted(set(kinds) - set(SAMPLE_FORMS))
    assert not missing, f"declare the forms of these kinds' samples in tests/fuzzing.py (SAMPLE_FORMS): {missing}"
    for kind in kinds:
        assert {form for _, form in log_sample(kind).forms} == SAMPLE_FORMS[kind], kind
        assert sample_keys(kind), f"the {kind} sample reads as no session: nothing to lose, nothing checked"


def check_log_damage(kind: str, how: str | None, data: st.DataObject) -> None:
    damage = data.draw(log_damage(kind, how, huge=LOG_HUGE), label="damage")
    with tempfile.TemporaryDirectory(prefix="archivist-fuzz-log-") as scratch:
        outcome = index_log_damage(damage, Path(scratch), LOG_SECONDS)
    fail_on(outcome.violations)


@pytest.mark.parametrize("kind", log_kinds())
@settings(FUZZ, max_examples=LOG_EXAMPLES)
@given(data=st.data())
def test_a_damaged_log_of_every_kind_is_indexed_keeping_what_the_damage_spares(kind: str, data: st.DataObject) -> None:
    check_log_damage(kind, None, data)


@pytest.mark.parametrize(
    ("kind", "how"),
    [
        (kind, how)
        for kind in log_kinds()
        for how in damages_of(SAMPLE_FORMS.get(kind, FORM_DAMAGES))  # (a kind undeclared: every damage, and fails)
        if how in ALWAYS
    ],
)
@settings(FUZZ, max_examples=2)
@given(data=st.data())
def test_hostile_text_and_broken_stores_reach_every_kind(kind: str, how: str, data: st.DataObject) -> None:
    check_log_damage(kind, how, data)
