"""The roles filter: a hit is a message of one of the roles, or a workspace document (document), on every surface."""

import json
import re

import pytest
from click.testing import CliRunner
from conftest import started_datasette, write_files
from mcp.client import Client
from test_agentlogs_sources import write_session

from archivist.archive.indexer import index_workspace
from archivist.cli import cli
from archivist.errors import ArchivistError
from archivist.mcp.tools import create_server
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

# a session of user, assistant, user, ... messages: "zeppelin" in the opening prompt (0),
# in a later request (2) and in an answer (5); "hangar" in the opening prompt and the answer
TEXTS = [
    "plan the zeppelin hangar move",
    "here is a plan",
    "what about the zeppelin mooring mast",
    "the mast is fine",
    "and the budget?",
    "the zeppelin hangar doors jam when the proxy times out",
]
WORKSPACE_DOC = "conversations/2025-11-10/001-plan"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("roles")
    workspace = write_files(
        root / "ws",
        {
            f"{WORKSPACE_DOC}/conversation.md": "# Plan\n\nzeppelin hangar plans\n",
            "notes/mast.md": "# Mast\n\nthe mooring mast drawings\n",
        },
    )
    index_workspace(workspace, log_sources=[("claude-code", write_session(root, TEXTS))])
    return workspace


def search(workspace, **params):
    with Archive.for_workspace(workspace) as archive:
        return archive.search({"mode": "keyword", "output": "full", **params})


def found(response):
    """Each hit's path, and for a session the index and role of the message it names."""
    return {
        ("session" if hit["path"].startswith("claude-code:") else hit["path"]): (
            (hit["message"]["index"], hit["message"]["role"]) if hit["message"] else None
        )
        for hit in response["results"]
    }


def test_each_hit_comes_from_a_message_of_one_of_the_roles(workspace):
    assert found(search(workspace, query="zeppelin")) == {"session": (0, "user"), WORKSPACE_DOC: None}
    assert found(search(workspace, query="zeppelin", roles="assistant")) == {"session": (5, "assistant")}
    assert found(search(workspace, query="zeppelin mooring", roles="user")) == {"session": (2, "user")}
    assert found(search(workspace, query="zeppelin", roles="document")) == {WORKSPACE_DOC: None}
    assert found(search(workspace, query="zeppelin", roles="Document,ASSISTANT")) == {
        "session": (5, "assistant"),
        WORKSPACE_DOC: None,
    }
    # words only in the opening prompt (the session's title and body, and message 0): a user's
    assert found(search(workspace, query="move", roles="user")) == {"session": (0, "user")}
    assert found(search(workspace, query="move", roles="assistant")) == {}
    # words only in an answer: never found as the user's, the session's body and title included
    assert found(search(workspace, query="doors jam", roles="user")) == {}
    assert found(search(workspace, query="doors jam", roles="user,assistant")) == {"session": (5, "assistant")}
    assert search(workspace, query="zeppelin", roles="tool,system")["results"] == []
    assert search(workspace, query="zeppelin", roles="assistant")["filters"]["roles"] == ["assistant"]


def test_without_words_a_session_is_listed_by_the_roles_of_its_messages(workspace):
    def listed(roles):
        response = search(workspace, mode="recent", roles=roles)
        return sorted(
            "session" if hit["path"].startswith("claude-code:") else hit["path"] for hit in response["results"]
        )

    assert listed("assistant") == ["session"]
    assert listed("user") == ["session"]
    assert listed("document") == [WORKSPACE_DOC, "notes/mast.md"]
    assert listed("tool") == []  # the session has no tool messages
    assert listed("") == sorted(["session", WORKSPACE_DOC, "notes/mast.md"])


def test_by_meaning_a_session_counts_only_where_its_user_and_assistant_text_both_may(workspace):
    """A session's chunks are its user and assistant messages: a search by meaning keeps it only
    when both roles are asked for; a workspace document, when document is."""
    from archivist.semantic.embeddings import embed_workspace

    embed_workspace(workspace)

    def meant(roles):
        response = search(workspace, query="zeppelin hangar doors", mode="semantic", roles=roles, min_similarity="-1")
        return sorted(
            "session" if hit["path"].startswith("claude-code:") else hit["path"] for hit in response["results"]
        )

    assert meant("") == sorted(["session", WORKSPACE_DOC, "notes/mast.md"])
    assert meant("user,assistant") == ["session"]
    assert meant("assistant") == [] and meant("user") == []
    assert meant("document") == [WORKSPACE_DOC, "notes/mast.md"]
    hybrid = search(workspace, query="zeppelin hangar doors", mode="hybrid", roles="assistant", min_similarity="-1")
    assert found(hybrid) == {"session": (5, "assistant")}  # found by its answer's words, not by meaning


def test_a_session_without_a_request_is_no_user_s(tmp_path):
    """A session whose only text is an answer: its body is that answer, and roles=user finds nothing."""
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    logs = write_session(tmp_path, ["", "the zeppelin answer alone"])
    index_workspace(workspace, log_sources=[("claude-code", logs)])
    assert found(search(workspace, query="zeppelin", roles="user")) == {}
    assert found(search(workspace, query="zeppelin", roles="assistant")) == {"session": (0, "assistant")}
    with Archive.for_workspace(workspace) as archive:
        listed = archive.search({"mode": "recent", "roles": "user"})
    assert [hit["path"] for hit in listed["results"]] == []


def test_an_unknown_role_is_a_clear_error(workspace):
    with pytest.raises(ArchivistError) as raised:
        search(workspace, query="zeppelin", roles="assistant,bot")
    error = raised.value
    assert error.code == "INVALID_PARAMETER"
    assert error.problem == "Unknown role: 'bot'"
    assert "user, assistant, tool, system" in error.why and "document" in error.why
    assert "roles=user,assistant" in error.hint


async def test_every_surface_takes_roles_and_answers_alike(workspace):
    params = {"query": "zeppelin", "mode": "keyword", "roles": "assistant"}
    datasette = await started_datasette(archive_path(workspace))
    api = (await datasette.client.get("/api/search", params=params)).json()
    assert [(hit["title"], hit["message"]) for hit in api["results"]] == [("plan the zeppelin hangar move", 5)]

    async with Client(create_server(archive_path(workspace), workspace)) as client:
        result = await client.call_tool("search", params)
        listed = await client.call_tool("search", {**params, "roles": ["assistant"]})  # a list, as MCP clients send
        wrong = await client.call_tool("search", {**params, "roles": "bot"})
    assert json.loads(result.content[0].text) == api == json.loads(listed.content[0].text)
    assert wrong.is_error and "Unknown role: 'bot'" in wrong.content[0].text

    cli_run = CliRunner().invoke(
        cli, ["search", str(workspace), "zeppelin", "--mode", "keyword", "--roles", "assistant", "--json"]
    )
    assert cli_run.exit_code == 0, cli_run.output
    assert json.loads(cli_run.stdout) == api
    text = CliRunner().invoke(cli, ["search", str(workspace), "zeppelin", "--mode", "keyword", "--role", "assistant"])
    assert text.exit_code == 0 and "message #5" in text.output and "Page 1 of 1 · 1 result" in text.output
    both = CliRunner().invoke(
        cli, ["search", str(workspace), "zeppelin", "--mode", "keyword", "--role", "user", "--role", "document"]
    )
    assert both.exit_code == 0 and "message #0" in both.output and "2 results" in both.output, both.output

    canned = await datasette.client.get("/archive/search.json", params={**params, "output": "brief", "_shape": "array"})
    assert json.loads(canned.json()[0]["response"]) == api

    page = await datasette.client.get("/search", params=params)
    assert page.status_code == 200
    assert 'name="roles" value="assistant"' in page.text  # kept as the page's other filters are
    assert re.search(r'<a href="[^"]+">Message #5</a>', page.text)
    assert "Message #0" not in page.text
    bad = await datasette.client.get("/api/search", params={**params, "roles": "bot"})
    assert bad.status_code == 400 and bad.json()["code"] == "INVALID_PARAMETER"
    assert "Unknown role: 'bot'" in bad.json()["error"]
