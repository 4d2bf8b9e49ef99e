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


async def test_a_search_that_finds_no_turn_within_its_limit_is_told_busy_and_the_next_one_runs():
    import time

    import anyio

    from archivist.queries.line import WAITING_PER_ROOM, Line

    line = Line(1, 0.05)
    async with line.turn():  # the one room is taken for longer than the patience
        started = time.perf_counter()
        with pytest.raises(ArchivistError) as busy:
            async with line.turn():
                pytest.fail("ran without a turn")
        assert 0.04 < time.perf_counter() - started < 1
    assert busy.value.code == "SEARCH_BUSY" and "SEARCH_BUSY" in CODES
    assert busy.value.problem == "The server is busy"
    assert (
        busy.value.why
        == "Its 1 searches at a time were all taken for 50 ms, so this one was not run; nothing was changed."
    )
    async with line.turn():  # the room is free again
        pass
    # past WAITING_PER_ROOM waiting for each room, a search is refused at once, without waiting
    patient = Line(1, None)
    refused: list[str] = []

    async def wait_for_a_turn():
        try:
            async with patient.turn():
                await anyio.sleep(0)
        except ArchivistError as error:
            refused.append(error.code)

    async with anyio.create_task_group() as tasks:
        async with patient.turn():
            for _ in range(WAITING_PER_ROOM + 3):
                tasks.start_soon(wait_for_a_turn)
            await anyio.sleep(0.05)
            assert refused == ["SEARCH_BUSY"] * 3
    assert refused == ["SEARCH_BUSY"] * 3  # the others ran once the turn was given back


async def test_the_web_tells_a_search_with_no_turn_503_search_busy_and_runs_the_next(sample_workspace):
    import time

    from archivist.web.app import LINES

    datasette = await started_datasette(archive_path(sample_workspace))
    assert (await datasette.client.get("/api/search", params={"query": "proxy"})).status_code == 200
    line = LINES[datasette]
    assert line.room == datasette.setting("num_sql_threads") and line.patience_s == 1.0
    line.patience_s = 0.1
    held = [line.turn() for _ in range(line.room)]  # every turn taken, as by long searches
    for turn in held:
        await turn.__aenter__()
    started = time.perf_counter()
    for path in ("/api/search", "/archive/search.json"):
        response = await datasette.client.get(path, params={"query": "proxy"})
        assert response.status_code == 503, path
        assert response.json()["code"] == "SEARCH_BUSY" and response.headers["retry-after"] == "1"
        assert response.json()["error"].startswith("❌ The server is busy\n")
    assert time.perf_counter() - started < 2
    for turn in held:
        await turn.__aexit__(None, None, None)
    assert (await datasette.client.get("/api/search", params={"query": "proxy"})).json()["total"] > 0


async def test_mcp_tells_a_call_with_no_turn_search_busy_as_a_tool_error(sample_workspace, monkeypatch):
    from archivist.mcp import answering
    from archivist.queries.line import Line

    line = Line(1, 0.05)
    monkeypatch.setattr(answering, "LINE", line)
    async with Client(create_server(archive_path(sample_workspace), sample_workspace)) as client:
        async with line.turn():
            result = await client.call_tool("search", {"query": "proxy", "mode": "keyword"})
        assert result.is_error and result.structured_content["code"] == "SEARCH_BUSY"
        assert "nothing was changed." in result.structured_content["error"]
        assert not (await client.call_tool("search", {"query": "proxy", "mode": "keyword"})).is_error
