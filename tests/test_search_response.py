"""The search response's one shape (queries/response.py): the SQL's two answers, the MCP output schema and
the ``output`` parameter's description hold the same fields, and every result carries seed 004's."""

from __future__ import annotations

import typing
from importlib.resources import files

import pytest

from archivist.mcp.outputs import Outcome, SearchResponse
from archivist.queries import filters, response
from archivist.queries.catalog import load_sql
from archivist.queries.declarations import QUERIES
from archivist.queries.runner import Archive

OUTCOME = set(typing.get_type_hints(Outcome)) - {"building"}  # every tool's (success, error, code)


def test_the_mcp_output_schema_has_the_declared_fields_and_no_other():
    declared = set(response.names("brief")) | set(response.names("full"))
    assert set(typing.get_type_hints(SearchResponse)) - OUTCOME == declared


def test_the_output_description_names_every_field_of_the_brief_answer_and_of_its_results():
    description = QUERIES["search"].param("output").description
    for name in (*response.names("brief"), *response.RESULT):
        assert name in description, name
    full_only = set(response.names("full")) - set(response.names("brief"))
    assert full_only and all(name in QUERIES["search"].description for name in full_only)


def test_the_sql_names_no_field_of_the_answers_and_no_filter_but_through_its_parts():
    sql = load_sql("search")
    answers = sql[sql.index("-- 11. the response") :]
    for field in response.FIELDS:
        for value in (field.brief, field.full):
            assert value is None or value.split("\n")[0] in answers, field.name
    source = (files("archivist.queries") / "sql" / "search.sql").read_text(encoding="utf-8")
    for f in filters.FILTERS:
        assert not any(f"{before}{f.name}" in source for before in (":", "plan.", "json(")), f.name


@pytest.mark.parametrize("output", ["brief", "full"])
def test_each_answer_has_exactly_its_declared_fields(embedded_sample, output):
    with Archive.for_workspace(embedded_sample) as archive:
        answer = archive.search({"query": "proxy", "output": output})
    if output == "full":
        assert list(answer) == list(response.names("full"))
    else:  # a null field is left out of the brief answer
        assert set(answer) <= set(response.names("brief")) and list(answer) == [
            name for name in response.names("brief") if name in answer
        ]


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
def test_every_result_of_the_api_and_mcp_answer_carries_seed_004s_fields_whatever_its_kind(embedded_sample, mode):
    kinds = set()
    with Archive.for_workspace(embedded_sample) as archive:
        for query in ("proxy", "borders", "session", "kubernetes"):
            answer = archive.search({"query": query, "mode": mode, "page_size": "100", "output": "brief"})
            for result in answer["results"]:
                assert set(response.RESULT) <= set(result), result
                assert result["entity_type"] == result.get("type", result["kind"]), result
                assert result["entity_id"] not in (None, ""), result
                kinds.add(result["kind"])
    assert kinds >= {"conversation", "report", "memory", "record", "note"}, kinds
