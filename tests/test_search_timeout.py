"""A search stopped at its time limit: SEARCH_TIMED_OUT with its whole sentence, on every surface (docs/errors.md)."""

from __future__ import annotations

import pytest
from conftest import started_datasette
from mcp import Client

from archivist.errors import CODES, ArchivistError, took_too_long
from archivist.mcp.calls import Workspaces
from archivist.mcp.tools import create_server
from archivist.queries.runner import Archive
from archivist.web.app import status_of
from archivist.workspace import archive_path


def test_a_search_past_its_time_limit_has_a_code_of_its_own_and_a_whole_sentence(sample_workspace):
    with Archive.for_workspace(sample_workspace, time_limit_ms=1e-6) as archive:
        with pytest.raises(ArchivistError) as timed_out:
            archive.search({"query": "proxy timeout", "mode": "keyword"})
    error = timed_out.value
    assert error.code == "SEARCH_TIMED_OUT" and "SEARCH_TIMED_OUT" in CODES
    assert error.problem == "The search took too long"
    assert error.why.endswith("was stopped; nothing was changed.") and "1e-06 ms" in error.why
    assert error.hint.startswith("Try again")
    # the archive answers the next search as before
    with Archive.for_workspace(sample_workspace) as archive:
        assert archive.search({"query": "proxy", "mode": "keyword"})["total"] > 0


def test_a_timed_out_search_is_no_invalid_parameter_on_the_web():
    assert status_of(took_too_long(1000)) == 503
    assert status_of(ArchivistError("INVALID_PARAMETER", "x")) == 400


async def test_the_web_tells_a_query_past_its_time_limit_with_503(sample_workspace):
    from archivist.web.app import query_failure

    # a real interrupted query (it never ends: only the time limit stops it), as the web's canned queries are told
    datasette = await started_datasette(archive_path(sample_workspace))
    slow = "with recursive n(i) as (select 1 union all select i + 1 from n) select count(*) from n"
    response = await datasette.client.get("/archive.json", params={"sql": slow, "_shape": "array"})
    failure = query_failure(datasette, response.json())
    assert (failure.code, status_of(failure)) == ("SEARCH_TIMED_OUT", 503)
    assert failure.message.startswith("❌ The search took too long") and "recursive" not in failure.message


async def test_mcp_tells_a_search_past_its_time_limit_as_a_tool_error_with_its_code(sample_workspace):
    workspaces = Workspaces(archive_path(sample_workspace), sample_workspace, time_limit_ms=1e-6)
    async with Client(create_server(archive_path(sample_workspace), sample_workspace, workspaces=workspaces)) as client:
        result = await client.call_tool("search", {"query": "proxy timeout", "mode": "keyword"})
    assert result.is_error
    assert result.structured_content["code"] == "SEARCH_TIMED_OUT"
    assert "nothing was changed." in result.structured_content["error"]
