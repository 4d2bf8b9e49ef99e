"""The brief search answer, the MCP search tool's and GET /api/search's default: what a list of
results shows, small enough to read on every call, with the id that fetches the rest."""

from __future__ import annotations

import json
import re

import pytest
from conftest import EVAL, started_datasette, write_files
from mcp import Client
from test_agentlogs_sources import write_session

from archivist.archive.indexer import index_workspace
from archivist.mcp.calls import answer_text
from archivist.mcp.tools import create_server
from archivist.queries import catalog, excerpts, runner
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

PAGE_KEYS = {"query", "mode", "total", "page", "page_size", "total_pages", "has_more", "results"}
OPTIONAL_PAGE_KEYS = {"matched", "sort"}  # the total's split (words only), a sort other than relevance
RESULT_KEYS = {
    "id",
    "kind",
    "type",
    "entity_type",
    "entity_id",
    "tags",
    "agent",
    "title",
    "date",
    "score",
    "rank",
    "matched",
    "message",
    "snippet",
}
BUDGET = 2500  # bytes of JSON for a page of 10 results (2.5 KB), seed 004's ids of every result aside
SEED_IDS = ("entity_type", "entity_id")  # what seed 004's result model asks of every result, whatever its kind
SEED_ID_CHARS = 20  # an entity_id's characters, at most (its entity_type is its type: check_brief)
HOSTILE_TITLE = 'A "quoted" title with a back\\slash, </mark> and <script>alert(1)</script>'
HOSTILE_BODY = (
    "Intro line.\n\n"
    "The zeppelin 🦄 docks at the hangar: שלום עולם, 飛行船, naïve café, a tab\there, a bell \x07 and "
    'an escape \x1b[31m, {"json": [1, "two"]}, \\u0000 as text, </mark><b>bold</b> ' + "x" * 600 + " zeppelin again.\n"
)
NOTES = {
    f"notes/zeppelin-{n:02d}.md": (
        f"---\ntags: [airships, note-{n}]\n---\n# Zeppelin note {n}\n\n"
        + "Filler words about nothing in particular. " * (n * 20)
        + f"The zeppelin hangar number {n} holds a ship.\n"
    )
    for n in range(14)
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """Notes with the word zeppelin (one of hostile text), a record, and an agent log's session."""
    root = tmp_path_factory.mktemp("brief")
    workspace = write_files(
        root / "ws",
        {
            **NOTES,
            "notes/hostile.md": f"# {HOSTILE_TITLE}\n\n{HOSTILE_BODY}",
            "records/bugs.jsonl": json.dumps(
                {
                    "entity_type": "bug",
                    "entity_id": "77",
                    "title": "Zeppelin icon is blurry",
                    "body": "The zeppelin icon is blurry on retina screens.",
                    "product_id": 598,
                    "timestamp": "2025-11-02T10:00:00Z",
                }
            )
            + "\n",
        },
    )
    texts = [f"message {n} about the weather" for n in range(8)]
    texts[5] = "the zeppelin hangar doors jam when the wind turns"
    index_workspace(workspace, log_sources=[("claude-code", write_session(root, texts))])
    return workspace


async def call(workspace, tool: str, **arguments) -> tuple[str, dict]:
    """A tool's text and structured answer, through the SDK's client."""
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.content[0].text, result.structured_content


def check_brief(text: str, body: dict) -> None:
    """The brief answer's shape: the page, then results of a few short fields."""
    assert json.loads(text) == body
    assert PAGE_KEYS <= set(body) <= PAGE_KEYS | OPTIONAL_PAGE_KEYS
    assert "matched" not in body or sum(body["matched"].values()) == body["total"]  # the split adds up
    for result in body["results"]:
        assert {"id", "kind", "title", "rank", "entity_type", "entity_id"} <= set(result) <= RESULT_KEYS, result
        assert None not in result.values() and [] not in result.values(), result  # an empty field is left out
        assert result["entity_type"] == result.get("type", result["kind"]), result  # seed 004's, whatever the kind
        assert "tags" not in result or result["kind"] == "memory", result
        snippet = result.get("snippet", "")  # left out where the title holds it
        assert isinstance(snippet, str) and len(snippet) <= 200, snippet
        assert "\n" not in snippet and "<mark>" not in snippet, snippet
    ranks = [result["rank"] for result in body["results"]]
    first = (body["page"] - 1) * body["page_size"] + 1
    assert ranks == list(range(first, first + len(ranks))), ranks


async def test_the_default_answer_is_brief_and_small(workspace):
    text, body = await call(workspace, "search", query="zeppelin", mode="keyword")
    check_brief(text, body)
    assert body["total"] == 17 and body["page_size"] == 10 and len(body["results"]) == 10
    assert (body["page"], body["total_pages"], body["has_more"]) == (1, 2, True)
    assert len(text.encode("utf-8")) <= BUDGET, len(text.encode("utf-8"))
    assert all("zeppelin" in result["snippet"].lower() for result in body["results"])
    kinds = {result["kind"] for result in body["results"]}
    assert {"note", "record", "conversation"} <= kinds
    session = next(result for result in body["results"] if result["kind"] == "conversation")
    assert (session["agent"], session["message"]) == ("claude-code", 5)
    bug = next(result for result in body["results"] if result["kind"] == "record")
    assert bug["type"] == "bug" and bug["date"] == "2025-11-02" and "agent" not in bug
    second = (await call(workspace, "search", query="zeppelin", mode="keyword", page=2))[1]
    assert len(second["results"]) == 7 and second["has_more"] is False
    assert not {r["id"] for r in body["results"]} & {r["id"] for r in second["results"]}


async def test_hostile_text_stays_text_in_valid_json(workspace):
    text, body = await call(workspace, "search", query="zeppelin docks", mode="keyword")
    check_brief(text, body)
    (hit,) = [result for result in body["results"] if result["title"] == HOSTILE_TITLE]
    assert "🦄" in text and "שלום" in text  # UTF-8 as it is, not \u escapes
    assert "zeppelin 🦄 docks" in hit["snippet"]
    # control characters are escaped in the JSON text, and whitespace becomes single spaces
    assert "\x07" not in text and "\x1b" not in text and "\t" not in hit["snippet"]
    words = await call(workspace, "search", query="zeppelin again", mode="keyword", match_mode="raw")
    (again,) = [result for result in words[1]["results"] if result["title"] == HOSTILE_TITLE]
    assert len(again["snippet"]) <= 200 and "again" in again["snippet"]  # 600 letters without a space before it
    for query in ('"quoted" title', "</mark> <script>", "\\u0000 json", "飛行船 naïve", "zeppelin\x00docks"):
        text, body = await call(workspace, "search", query=query, mode="keyword")
        check_brief(text, body)


async def test_each_result_fetches_its_document_by_its_id(workspace):
    _, body = await call(workspace, "search", query="zeppelin", mode="keyword", page_size=20)
    assert len(body["results"]) == 17
    for result in body["results"]:
        _, document = await call(workspace, "get_document", document=result["id"])  # the id as the answer has it
        assert (document["id"], document["kind"], document["title"]) == (result["id"], result["kind"], result["title"])
        assert (await call(workspace, "get_document", document=str(result["id"])))[1] == document
        if "message" in result:  # an agent log's session: the message that matched is get_conversation's offset
            _, page = await call(workspace, "get_conversation", document=result["id"], offset=result["message"])
            assert page["messages"][0]["seq"] == result["message"]
            assert "zeppelin" in page["messages"][0]["text"]
        else:
            assert "zeppelin" in (document["title"] + document["body"]).lower()


async def test_rest_and_mcp_answer_the_same_brief_and_full_json(workspace):
    datasette = await started_datasette(archive_path(workspace))
    for arguments in (
        {"query": "zeppelin hangar", "mode": "keyword"},
        {"query": "zeppelin", "mode": "recent", "page_size": 3},
        {"mode": "tag", "tags": "airships", "page": 2, "page_size": 5},
        {"query": "zeppelin", "mode": "keyword", "output": "full"},
        {"mode": "faceted", "entities": "note", "output": "brief"},
    ):
        rest = await datasette.client.get("/api/search", params=arguments)
        assert rest.status_code == 200, rest.text
        text, body = await call(workspace, "search", **arguments)
        assert rest.json() == body
        if arguments.get("output") != "full":
            check_brief(text, body)
        else:
            assert {"facets", "filters", "query", "mode"} <= set(body)
    bad = await datasette.client.get("/api/search", params={"query": "zeppelin", "output": "short"})
    assert bad.status_code == 400 and bad.json()["code"] == "INVALID_PARAMETER"
    async with Client(create_server(archive_path(workspace), workspace)) as client:
        failed = await client.call_tool("search", {"query": "zeppelin", "output": "short"})
    assert failed.is_error and failed.structured_content["code"] == "INVALID_PARAMETER"
    assert "brief" in failed.structured_content["error"]


@pytest.mark.parametrize(
    "params",
    [
        {"query": "authentication", "mode": "keyword"},
        {"query": "authentication"},  # hybrid
        {"query": "authentication patterns", "mode": "semantic"},
        {"query": "proxy timeout", "mode": "scan"},
        {"mode": "scan"},
        {"mode": "recent", "page": 2, "page_size": 7},
        {"mode": "tag", "tags": "kubernetes"},
        {"mode": "faceted", "entities": "memory,record", "start_date": "2025-10"},
        {"mode": "similar", "document": "conversations/2025-11-10/002-debug-auth"},
        {"query": "proxy", "mode": "keyword", "page": 3, "page_size": 4},
    ],
)
def test_brief_lists_what_full_lists(embedded_sample, params):
    """Brief is full in few words: the same documents in the same order, the same paging."""
    with Archive.for_workspace(embedded_sample) as archive:
        brief = archive.search({**params, "output": "brief"})
        full = archive.search({**params, "output": "full"})
    assert {key: brief[key] for key in PAGE_KEYS - {"results"}} == {key: full[key] for key in PAGE_KEYS - {"results"}}
    assert [r["id"] for r in brief["results"]] == [r["id"] for r in full["results"]]
    assert full["results"], params
    for short, whole in zip(brief["results"], full["results"], strict=True):
        assert short["kind"] == whole["kind"] and short.get("type", short["kind"]) == whole["entity_type"]
        assert short["title"] == (whole["title"] or whole["path"]) and short.get("date") == whole["date"]
        if whole["score"] is None:
            assert "score" not in short
        else:
            assert short["score"] == pytest.approx(whole["score"], abs=0.0006)  # three decimals
        assert short["rank"] == whole["rank"]
        assert (short["entity_type"], short["entity_id"]) == (whole["entity_type"], whole["entity_id"])
        assert short.get("tags", []) == (whole["tags"] if whole["kind"] == "memory" else [])
        if "snippet" in short:
            assert 0 < len(short["snippet"]) <= 200
        else:  # what it would say, the title says: the title holds the start of the full excerpt
            start = re.sub(r"</?mark>", "", whole["excerpt"]).strip(". ")[:20]
            assert start.lower().lstrip("# ") in short["title"].lower(), (short, whole["excerpt"])
    if params.get("mode") == "scan":
        # scan ranks as hybrid (newest first without a query); its full excerpts are the short ones
        hybrid = {**params, "mode": "hybrid"} if params.get("query") else {**params, "mode": "recent"}
        with Archive.for_workspace(embedded_sample) as archive:
            assert [r["id"] for r in archive.search({**hybrid, "output": "brief"})["results"]] == [
                r["id"] for r in brief["results"]
            ]


def _without_seed_ids(result: dict) -> dict:
    return {key: value for key, value in result.items() if key not in SEED_IDS}


def test_ten_results_of_the_sample_workspace_fit_in_two_and_a_half_kilobytes(embedded_sample):
    """Its memories have long titles and its records more fields: the budget holds for them too."""
    pages = [
        {"query": query, "mode": mode}
        for query in ("proxy", "timeout", "authentication", "kubernetes", "token", "session", "sqlite")
        for mode in ("keyword", "hybrid", "scan")
    ] + [{"mode": "recent", "entities": kind} for kind in ("", "memory", "record", "conversation", "memory,record")]
    sizes = {}
    with Archive.for_workspace(embedded_sample) as archive:
        for params in pages:
            body = archive.search(params | {"output": "brief"})
            if len(body["results"]) == 10:
                text = answer_text(body)
                check_brief(text, body)
                rest = answer_text({**body, "results": [_without_seed_ids(r) for r in body["results"]]})
                sizes[str(params)] = len(rest.encode("utf-8"))
                assert all(len(str(r["entity_id"])) <= SEED_ID_CHARS for r in body["results"]), body
    assert len(sizes) >= 20, sizes  # pages of ten of every kind were measured
    assert max(sizes.values()) <= BUDGET, sizes


# --- the size on a real corpus -----------------------------------------------------------

NOTES_CORPUS = EVAL / "markdown" / "humanlayer-thoughts"
QUERIES = (
    "authentication",
    "linear ticket",
    "hack command",
    "research codebase",
    "daemon socket",
    "thoughts directory",
    "approval",
    "session resume",
    "pull request description",
    "tests",
)


@pytest.mark.skipif(not NOTES_CORPUS.is_dir(), reason="../shared/eval/markdown is not beside this checkout")
async def test_ten_results_of_real_notes_fit_in_two_and_a_half_kilobytes(tmp_path):
    db_path = tmp_path / "archive.db"
    index_workspace(NOTES_CORPUS, db_path)  # read in place
    sizes = []
    async with Client(create_server(db_path, NOTES_CORPUS)) as client:
        for query in QUERIES:
            result = await client.call_tool("search", {"query": query, "mode": "keyword"})
            text = result.content[0].text
            check_brief(text, result.structured_content)
            assert len(result.structured_content["results"]) == 10, query
            sizes.append(len(text.encode("utf-8")))
            full = await client.call_tool("search", {"query": query, "mode": "keyword", "output": "full"})
            assert len(full.content[0].text.encode("utf-8")) > 3 * sizes[-1]
    assert max(sizes) <= BUDGET, sizes


# --- the cost of a first search ----------------------------------------------------------

# CTEs that read the rankings: SQLite plans a CTE again at every place that names it, so
# each is named once, and a new connection prepares the search in little time. The keyword
# ranking is named twice: ranked reads it as it is for a keyword search (which then needs no
# scored), scored for the others.
READ_ONCE = ("every_word_hits", "some_word_hits", "semantic_ranking", "scored", "ranked", "ordered", "listed")
READ_TWICE = ("keyword_ranking",)


def test_the_rankings_are_read_once_so_a_new_connection_prepares_search_fast(workspace):
    sql = catalog.sql_for("search")
    code = re.sub(r"--[^\n]*", "", sql)
    for name in READ_ONCE + READ_TWICE:
        named = len(re.findall(rf"(?:\bfrom|\bjoin|,)\s+{name}\b(?!\.|\s+as\b)", code))  # FROMs that name it
        assert named == (2 if name in READ_TWICE else 1), name
    params = {name: "" for name in re.findall(r":(\w+)", sql)} | {"query": "zeppelin", "mode": "keyword"}
    conn = runner.connect(archive_path(workspace))
    assert conn.execute(
        "EXPLAIN " + sql, params
    ).fetchall()  # prepares on a new connection (its time: bench/faceted_speed.py)
    conn.close()


@pytest.mark.parametrize(
    "text",
    [
        "plain words about a zeppelin that docks at noon",
        "naïve café — the ÉCOLE zeppelin 🦄 docks, " * 40,
        "no word of it here",
        "zeppelin" + " filler" * 5000 + " docks at the end",
    ],
)
def test_a_snippet_is_the_same_from_text_or_its_utf8_bytes(text):
    """SQL passes a body to archivist_around as a BLOB (no decoding of all of it): the same snippet."""
    for query in ("zeppelin docks", "école café", "noon"):
        assert excerpts.around(text.encode("utf-8"), query, 56) == excerpts.around(text, query, 56)
    assert excerpts.around(text.encode("utf-8"), "zeppelin", 56) is not None or "zeppelin" not in text
