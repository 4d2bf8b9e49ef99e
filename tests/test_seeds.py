"""The five seed specifications' acceptance scenarios, each run as a caller written against its
seed runs it: through the MCP server (the SDK's own client, in memory) and GET /api/search on the
Datasette app, with the arguments the seed names and nothing else (none of our options: the
answers are the default ones), on archives built from workspaces in the seeds' shapes. Whole
fields and exact orderings where a seed states them."""

from __future__ import annotations

import datetime as dt
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from conftest import started_datasette, write_files
from mcp import Client

from archivist.archive.indexer import index_workspace
from archivist.mcp.tools import create_server
from archivist.queries import catalog, runner
from archivist.workspace import archive_path

NOW = dt.datetime.now(dt.UTC)


def _ago(days: int) -> str:
    return (NOW - dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _lines(*rows: dict[str, Any]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def _indexed(tmp_path_factory: pytest.TempPathFactory, name: str, files: dict[str, str]) -> Path:
    workspace = write_files(tmp_path_factory.mktemp(name) / "workspace", files)
    index_workspace(workspace)
    return workspace


def _server(workspace: Path, allowed: tuple[Path, ...] = ()) -> Client:
    return Client(create_server(archive_path(workspace), workspace, allowed))


async def call(workspace: Path, tool: str, *, allowed: tuple[Path, ...] = (), **arguments: Any) -> dict[str, Any]:
    """A tool's structured answer, as a caller gets it; the call must succeed."""
    async with _server(workspace, allowed) as client:
        result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.structured_content
    assert json.loads(result.content[0].text) == result.structured_content  # the text says the same
    return result.structured_content


async def failure(workspace: Path, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's error: an error result whose body is docs/errors.md's, never an exception nor SQLite's words."""
    async with _server(workspace) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    body = result.structured_content
    assert set(body) == {"success", "error", "code"} and body["success"] is False, body
    assert body["error"].startswith("❌") and "sqlite" not in body["error"].lower(), body
    return body


def paths(answer: dict[str, Any], field: str = "path") -> list[str]:
    return [row[field] for row in answer["results"]]


# --- seed 000: search_workspace's date_range, YYYY-MM and YYYY-MM-DD -----------------------------

SEED_000 = {
    "conversations/2025-11-10/001-brainstorm-feature/conversation.md": "# Brainstorm a feature\n\n"
    "A feature for authentication: passkeys.\n",
    "conversations/2025-11-10/002-debug-auth/conversation.md": "# Debug auth\n\nThe authentication token expires early.\n",
    "conversations/2025-11-11/001-plan-redesign/conversation.md": "# Plan the redesign\n\n"
    "The feature list and the authentication screens.\n",
    "conversations/2025-11-11/002-another-new/conversation.md": "# Another new one\n\nA feature flag for the editor.\n",
    "conversations/2025-11/001-old-conversation/conversation.md": "# An old conversation\n\n"
    "The first feature, before authentication existed.\n",
    "conversations/2025-10-31/001-halloween/conversation.md": "# October\n\nA feature and authentication, a day early.\n",
    "conversations/2025-12-01/001-december/conversation.md": "# December\n\nA feature and authentication, a day late.\n",
}


@pytest.fixture(scope="module")
def seed_000(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _indexed(tmp_path_factory, "seed_000", SEED_000)


async def test_seed_000_a_day_returns_only_the_conversations_of_that_days_folder(seed_000):
    answer = await call(seed_000, "search_workspace", query="authentication", date_range="2025-11-10")
    assert answer["success"] is True and answer["num_results"] == 2
    assert sorted(paths(answer)) == [
        "conversations/2025-11-10/001-brainstorm-feature",
        "conversations/2025-11-10/002-debug-auth",
    ]


async def test_seed_000_a_month_returns_the_old_month_folder_and_every_day_folder_of_it(seed_000):
    answer = await call(seed_000, "search_workspace", query="feature", date_range="2025-11")
    assert sorted(paths(answer)) == [
        "conversations/2025-11-10/001-brainstorm-feature",
        "conversations/2025-11-11/001-plan-redesign",
        "conversations/2025-11-11/002-another-new",
        "conversations/2025-11/001-old-conversation",
    ]


async def test_seed_000_without_a_date_range_every_folder_of_both_layouts_is_searched(seed_000):
    answer = await call(seed_000, "search_workspace", query="feature")
    assert sorted(paths(answer)) == sorted(path.rsplit("/", 1)[0] for path in SEED_000 if "debug-auth" not in path)


async def test_seed_000_the_date_range_schema_states_both_formats_and_that_a_month_matches_its_days(seed_000):
    async with _server(seed_000) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    date_range = tools["search_workspace"].input_schema["properties"]["date_range"]
    assert date_range["type"] == "string" or {"type": "string"} in date_range.get("anyOf", [])
    for sentence in (
        "Filter by date range.",
        "Supports YYYY-MM (month) or YYYY-MM-DD (day) format.",
        "Month format matches all days within that month",
        "Examples: '2025-11' or '2025-11-10'",
    ):
        assert sentence in date_range["description"], sentence


@pytest.mark.parametrize("date_range", ["2025-11-1", "2025/11", "nov", "2025-11-31", "2025-1"])
async def test_seed_000_a_date_range_in_neither_format_is_an_error_never_a_partial_match(seed_000, date_range):
    body = await failure(seed_000, "search_workspace", query="authentication", date_range=date_range)
    assert body["code"] == "INVALID_DATE_RANGE" and "YYYY-MM" in body["error"]


async def test_seed_000_a_future_month_is_valid_and_finds_nothing(seed_000):
    answer = await call(seed_000, "search_workspace", query="feature", date_range="2030-01")
    assert answer == {"success": True, "num_results": 0, "results": []}


# --- seed 001: search_reports and its related tools --------------------------------------------

PROXY_REPORT = (
    "reports/proxy-slow-meeting-analysis-command/proxy-slow-meeting-analysis-command_报告_20251201_172952_v1.md"
)
PAC_REPORT = "reports/proxy-slow-meeting-analysis-command/2025-11-28-proxy-pac-review.md"
DECODE_REPORT = "reports/analyze_zoom_speech_sdk_log/Zoom_Speech_SDK_日志分析报告_20251120_decode_response_v6.md"
EARLIER_REPORT = "reports/analyze_zoom_speech_sdk_log/sdk_log_2025_11_05.md"
UNDATED_REPORT = "reports/analyze_zoom_speech_sdk_log/undated-notes.md"
SEED_001 = {
    PROXY_REPORT: "# Proxy slow meeting join\n\n"
    + "Background on the customer's network and the meeting client. " * 4
    + "We detected a proxy timeout issue during meeting join. The WinHTTP call waits for the proxy "
    "timeout, and a second proxy timeout follows before the join succeeds. "
    + "Further notes on the logs. " * 7
    + "The end of the notes.\n",
    PAC_REPORT: "# PAC review\n\nOne Proxy Timeout in the PAC file's fallback.\n",  # case does not matter
    DECODE_REPORT: "# Decode response v6\n\nAnalyzing decode response timing. Token validation shows a slow "
    "decode response. A proxy timeout once.\n",
    EARLIER_REPORT: "# Earlier\n\nThe decode response was slow; every decode response waited.\n",
    UNDATED_REPORT: "# Notes\n\nOne decode response without a date.\n",
}


@pytest.fixture(scope="module")
def seed_001(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _indexed(tmp_path_factory, "seed_001", SEED_001)


def _excerpt(text: str, query: str) -> str:
    """The seed's excerpt: 100 characters either side of the first match, '...' where cut."""
    start = text.lower().find(query.lower())
    begin, end = max(0, start - 100), min(len(text), start + len(query) + 100)
    return ("..." if begin else "") + " ".join(text[begin:end].split()) + ("..." if end < len(text) else "")


def _report(workspace: Path, relative: str, date: str | None, query: str) -> dict[str, Any]:
    """A search_reports result as seed 001's output schema has it, for one report of the workspace."""
    path = str(workspace.resolve() / relative)
    _, command, name = relative.split("/")
    return {
        "report_name": name,
        "command_name": command,
        "date": date,
        "excerpt": _excerpt(SEED_001[relative].strip(), query),  # a report is its text, trimmed
        "link": "file://" + urllib.parse.quote(path),
        "path": path,
    }


async def test_seed_001_search_all_reports_ranks_by_match_count_then_newer_date(seed_001, monkeypatch):
    monkeypatch.delenv("ARCHIVIST_REPORT_LINK_BASE_URL", raising=False)
    answer = await call(seed_001, "search_reports", query="proxy timeout")
    assert answer["success"] is True and answer["num_results"] == 3
    expected = [
        _report(seed_001, PROXY_REPORT, "2025-12-01T00:00:00.000Z", "proxy timeout"),  # three matches
        _report(seed_001, PAC_REPORT, "2025-11-28T00:00:00.000Z", "proxy timeout"),  # one, the newer
        _report(seed_001, DECODE_REPORT, "2025-11-20T00:00:00.000Z", "proxy timeout"),  # one, the older
    ]
    assert [{key: row[key] for key in expected[0]} for row in answer["results"]] == expected
    assert answer["results"][0]["excerpt"].startswith("...") and answer["results"][0]["excerpt"].endswith("...")


async def test_seed_001_search_within_a_command_parses_each_date_pattern_and_null_without_one(seed_001, monkeypatch):
    monkeypatch.delenv("ARCHIVIST_REPORT_LINK_BASE_URL", raising=False)
    answer = await call(
        seed_001, "search_reports", query="decode response", command_filter="analyze_zoom_speech_sdk_log"
    )
    expected = [
        _report(seed_001, DECODE_REPORT, "2025-11-20T00:00:00.000Z", "decode response"),  # YYYYMMDD, 3 matches
        _report(seed_001, EARLIER_REPORT, "2025-11-05T00:00:00.000Z", "decode response"),  # YYYY_MM_DD, 2
        _report(seed_001, UNDATED_REPORT, None, "decode response"),  # no date in the name, 1
    ]
    assert [{key: row[key] for key in expected[0]} for row in answer["results"]] == expected


async def test_seed_001_max_results_limits_within_one_to_one_hundred(seed_001):
    answer = await call(seed_001, "search_reports", query="decode response", max_results=1)
    assert [row["report_name"] for row in answer["results"]] == [DECODE_REPORT.rsplit("/", 1)[1]]
    for bad in (0, 101):
        body = await failure(seed_001, "search_reports", query="decode response", max_results=bad)
        assert body["code"] == "INVALID_PARAMETER" and "max_results" in body["error"]


async def test_seed_001_errors_carry_the_seeds_codes(seed_001, seed_000):
    assert (await failure(seed_001, "search_reports", query=""))["code"] == "INVALID_QUERY"
    for bad in ("../proxy-slow-meeting-analysis-command", "a/b", "x;rm"):
        body = await failure(seed_001, "search_reports", query="proxy", command_filter=bad)
        assert body["code"] == "INVALID_COMMAND_FILTER", bad
    unknown = await failure(seed_001, "search_reports", query="proxy", command_filter="no-such-command")
    assert unknown["code"] == "DIRECTORY_NOT_FOUND"
    assert (await failure(seed_000, "search_reports", query="proxy"))["code"] == "DIRECTORY_NOT_FOUND"


async def test_seed_001_related_tools_list_a_command_newest_first_get_a_report_and_find_commands(seed_001):
    listed = await call(seed_001, "list_command_reports", command="analyze_zoom_speech_sdk_log")
    assert [row["report_name"] for row in listed["results"]] == [
        path.rsplit("/", 1)[1] for path in (DECODE_REPORT, EARLIER_REPORT, UNDATED_REPORT)
    ]
    found = await call(seed_001, "search_reports", query="proxy timeout")
    report = await call(seed_001, "get_report", path=found["results"][0]["path"])
    assert report["success"] is True and report["content"] == SEED_001[PROXY_REPORT].strip()
    commands = await call(seed_001, "search_commands", query="proxy")
    assert {row["command_name"] for row in commands["results"]} == {
        "proxy-slow-meeting-analysis-command",
        "analyze_zoom_speech_sdk_log",  # a report of it mentions a proxy timeout
    }


# --- seed 002: faceted search over memories ------------------------------------------------------

SEED_002 = [  # the seed's integration data, and two more
    {
        "content": "Python async testing guide",
        "content_hash": "hash1",
        "tags": ["python", "testing", "async"],
        "memory_type": "note",
        "created_at": "2024-06-01T00:00:00Z",
    },
    {
        "content": "JavaScript testing tutorial",
        "content_hash": "hash2",
        "tags": ["javascript", "testing"],
        "memory_type": "note",
        "created_at": "2024-07-01T00:00:00Z",
    },
    {
        "content": "Task: Review Python code",
        "content_hash": "hash3",
        "tags": ["python", "review"],
        "memory_type": "task",
        "created_at": "2024-08-01T00:00:00Z",
    },
    {
        "content": "Python testing checklist for late July",
        "content_hash": "late-july",
        "tags": ["python", "testing"],
        "memory_type": "reference",
        "created_at": "2024-07-31T18:30:00Z",
    },
    {"content": "Python packaging notes without a date", "content_hash": "undated", "tags": ["python"]},
]
TITLES = {memory["content_hash"]: memory["content"] for memory in SEED_002}


@pytest.fixture(scope="module")
def seed_002(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _indexed(tmp_path_factory, "seed_002", {"memories/service.jsonl": _lines(*SEED_002)})


def titles(answer: dict[str, Any]) -> list[str]:
    return [result["title"] for result in answer["results"]]


ALL_FACETS = {
    "mode": "faceted",
    "query": "testing",
    "tags": ["python", "testing"],
    "match_all": False,
    "start_date": "2024-05-01",
    "end_date": "2024-07-31",
    "memory_type": "note",
    "page": 1,
    "page_size": 10,
}


async def test_seed_002_faceted_search_returns_the_memories_matching_every_facet_with_their_type_and_tags(seed_002):
    """The seed's comment expects hash1 alone for "python OR testing", but hash2 (a note tagged
    testing, of 2024-07-01) meets every facet it names when tags are ORed; with match_all hash1 does."""
    answer = await call(seed_002, "search", **ALL_FACETS)
    assert sorted(titles(answer)) == [TITLES["hash2"], TITLES["hash1"]]
    assert answer["total"] == len(answer["results"]) == 2
    for memory in answer["results"]:
        assert memory["kind"] == "memory" and memory["type"] == "note"
        assert any(tag in memory["tags"] for tag in ["python", "testing"])
    (only,) = (await call(seed_002, "search", **{**ALL_FACETS, "match_all": True}))["results"]
    # the whole result: its title is its text, so no snippet repeats it
    assert {key: value for key, value in only.items() if key not in ("id", "score")} == {
        "kind": "memory",
        "type": "note",
        "entity_type": "note",  # (seed 004's ids of every result: its type, and the memory's own id)
        "entity_id": "hash1",
        "tags": ["python", "testing", "async"],
        "title": "Python async testing guide",
        "date": "2024-06-01",
        "rank": 1,
    }
    assert isinstance(only["score"], float)
    document = await call(seed_002, "get_document", document=only["id"])
    assert document["extra"]["content_hash"] == "hash1" and document["extra"]["created_at"] == "2024-06-01T00:00:00Z"


async def test_seed_002_faceted_search_without_a_query_lists_newest_first(seed_002):
    answer = await call(seed_002, "search", mode="faceted", query="", tags=["python"], start_date="2024-01-01")
    assert titles(answer) == [TITLES["hash3"], TITLES["late-july"], TITLES["hash1"]]  # the undated one is left out
    assert [result["date"] for result in answer["results"]] == ["2024-08-01", "2024-07-31", "2024-06-01"]
    assert [result["rank"] for result in answer["results"]] == [1, 2, 3]


async def test_seed_002_pagination_metadata_counts_pages_of_the_whole_match(seed_002):
    first = await call(seed_002, "search", mode="faceted", tags=["python"], page=1, page_size=3)
    second = await call(seed_002, "search", mode="faceted", tags=["python"], page=2, page_size=3)
    assert {key: first[key] for key in ("total", "page", "page_size", "total_pages", "has_more")} == {
        "total": 4,
        "page": 1,
        "page_size": 3,
        "total_pages": 2,
        "has_more": True,
    }
    assert (second["page"], second["has_more"], [r["rank"] for r in second["results"]]) == (2, False, [4])
    assert titles(first) + titles(second) == [TITLES[h] for h in ("hash3", "late-july", "hash1", "undated")]


async def test_seed_002_tags_match_any_by_default_and_all_with_match_all(seed_002):
    any_tag = await call(seed_002, "search", mode="tag", tags=["python", "testing"])
    assert sorted(titles(any_tag)) == sorted(TITLES.values())
    every_tag = await call(seed_002, "search", mode="tag", tags=["python", "testing"], match_all=True)
    assert titles(every_tag) == [TITLES["late-july"], TITLES["hash1"]]  # newest first


async def test_seed_002_the_memory_services_argument_names_and_modes_are_accepted(seed_002):
    answer = await call(seed_002, "search", mode="faceted", memory_type="task", k=5, encoding_context={"a": 1})
    assert titles(answer) == [TITLES["hash3"]] and answer["page_size"] == 5
    for mode in ("hybrid", "scan", "recent", "faceted"):
        assert (await call(seed_002, "search", query="python", mode=mode))["results"], mode
    assert (await call(seed_002, "search", mode="tag", tags=["review"]))["results"]
    assert (await call(seed_002, "search", mode="similar", document=answer["results"][0]["id"]))["results"] == []
    body = await failure(seed_002, "search", query="python", mode="fuzzy")
    assert body["code"] == "INVALID_PARAMETER" and "faceted" in body["error"]


async def test_seed_002_rest_answers_the_faceted_search_as_mcp_does(seed_002):
    datasette = await started_datasette(archive_path(seed_002))
    query = {**ALL_FACETS, "tags": "python,testing", "match_all": "false"}
    rest = await datasette.client.get("/api/search", params=query)
    assert rest.status_code == 200 and rest.json() == await call(seed_002, "search", **ALL_FACETS)


# --- seed 003: RAG tools: embedding, semantic search, similar documents --------------------------

JWT = "conversations/2025-11-10/001-jwt-auth"
OAUTH = "conversations/2025-11-12/001-oauth-flow"
API_SECURITY = "conversations/2025-11-14/001-api-security"
API_PLAN = "plan/2025-11-18/001-api-design"
K8S_OCTOBER = "debug/2025-10-05/001-kubernetes-crash"
K8S_NOVEMBER = "plan/2025-11-20/002-kubernetes-rollout"
SEED_003 = {
    f"{JWT}/chat.md": "# JWT authentication\n\nWe sign JSON Web Tokens with RS256, verify the signature and the "
    "expiry on every request, rotate the signing keys, and keep access tokens short-lived with refresh tokens "
    "for login sessions.\n",
    f"{JWT}/notes.md": "# Token claims\n\nThe claims sub, exp and iat; a clock skew leeway of 30 seconds when "
    "verifying a token's expiry.\n",
    f"{OAUTH}/chat.md": "# OAuth login flow\n\nThe OAuth 2.0 authorization code flow with PKCE: the client "
    "redirects to the authorization server, exchanges the code for an access token and a refresh token, and "
    "validates the ID token before the user is logged in.\n",
    f"{API_SECURITY}/chat.md": "# API security review\n\nAuthenticating API requests: bearer tokens in the "
    "Authorization header, scopes per endpoint, rate limits, and rejecting expired or forged tokens.\n",
    "conversations/2025-11-15/001-sourdough/chat.md": "# Sourdough bread\n\nFeeding the starter, a long cold "
    "proof in the fridge, scoring the loaf and baking it in a Dutch oven at 250 degrees.\n",
    "conversations/2025-11-16/001-tomatoes/chat.md": "# Growing tomatoes\n\nStaking the plants, pinching side "
    "shoots, watering at the roots and picking the fruit when it turns deep red.\n",
    f"{API_PLAN}/chat.md": "# API design plan\n\nResource naming, versioning in the URL, pagination with cursors "
    "and consistent error bodies for the public REST API.\n",
    "brainstorm/2025-11-19/001-api-ideas/chat.md": "# API design ideas\n\nBrainstorm on API design: GraphQL "
    "or REST, webhooks, and SDKs generated from an OpenAPI description.\n",
    f"{K8S_OCTOBER}/chat.md": "# Kubernetes crash loop\n\nA pod in CrashLoopBackOff: kubectl describe showed "
    "OOMKilled, so the container's memory limit on the Kubernetes cluster was raised.\n",
    f"{K8S_NOVEMBER}/chat.md": "# Kubernetes rollout plan\n\nA rolling update of the Kubernetes deployment with "
    "readiness probes, a canary of 10 percent of the pods, and kubectl rollout undo if errors rise.\n",
}
AUTH = {JWT, OAUTH, API_SECURITY}


@pytest.fixture(scope="module")
def seed_003(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seed 003's workspace, indexed and embedded (read-only for its tests)."""
    from archivist.semantic.embeddings import embed_workspace

    workspace = write_files(tmp_path_factory.mktemp("seed_003") / "workspace", SEED_003)
    embed_workspace(workspace)
    return workspace


@pytest.fixture
def unembedded(tmp_path: Path) -> Path:
    """Ten conversations, five of them on 2025-11-10, indexed and not embedded."""
    files = {
        f"conversations/2025-11-{day:02d}/00{n}-topic-{day}-{n}/chat.md": f"# Topic {day} {n}\n\nNotes {day} {n}.\n"
        for day in (10, 11)
        for n in range(1, 6)
    }
    files["brainstorm/2025-11-17/001-new-idea/conversation.md"] = "# A new idea\n\nA calendar for plant watering.\n"
    workspace = write_files(tmp_path / "workspace", files)
    index_workspace(workspace)
    return workspace


async def test_seed_003_embed_document_embeds_one_conversation_that_semantic_search_then_finds(unembedded):
    idea = "brainstorm/2025-11-17/001-new-idea"
    before = await call(unembedded, "search_semantic", query="watering plants on a calendar")
    assert before == {"success": True, "num_results": 0, "results": []}
    embedded = await call(unembedded, "embed_document", path=idea)
    assert embedded == {"success": True, "embedded": 1, "skipped": 0, "total_files": 1}
    after = await call(unembedded, "search_semantic", query="watering plants on a calendar")
    assert paths(after, "source_path") == [idea]
    # a file of the conversation names it too: already embedded, it is skipped
    again = await call(unembedded, "embed_document", path=f"{idea}/conversation.md")
    assert again == {"success": True, "embedded": 0, "skipped": 1, "total_files": 1}


async def test_seed_003_embed_workspace_embeds_what_is_left_and_skips_what_is_embedded(unembedded):
    five = await call(unembedded, "embed_document", path="conversations/2025-11-10")
    assert five == {"success": True, "embedded": 5, "skipped": 0, "total_files": 5}
    rest = await call(unembedded, "embed_workspace")
    assert rest == {"success": True, "embedded": 6, "skipped": 5}  # the other five, and the new idea
    assert await call(unembedded, "embed_workspace") == {"success": True, "embedded": 0, "skipped": 11}


@pytest.mark.parametrize("path", ["nonexistent/path", "../outside", "/etc", "conversations/../../etc"])
async def test_seed_003_embedding_a_path_that_is_not_in_the_workspace_is_path_not_found(unembedded, path):
    body = await failure(unembedded, "embed_document", path=path)
    assert body["code"] == "PATH_NOT_FOUND" and re.search(r"Path (not found|is outside the workspace): ", body["error"])


async def test_seed_003_semantic_search_ranks_the_authentication_conversations_first(seed_003):
    answer = await call(seed_003, "search_semantic", query="authentication patterns")
    assert answer["success"] is True and answer["num_results"] == len(answer["results"]) >= 3
    assert set(paths(answer, "source_path")[:3]) == AUTH
    for result in answer["results"]:
        assert {"conversation", "score", "text", "source_path"} <= set(result)
        files = "".join(text for path, text in SEED_003.items() if path.startswith(result["source_path"] + "/"))
        assert result["text"] and "".join(result["text"].split()) in "".join(files.split())  # a passage of it
    scores = [result["score"] for result in answer["results"]]
    assert scores == sorted(scores, reverse=True)


async def test_seed_003_semantic_search_filters_by_conversation_type(seed_003):
    answer = await call(seed_003, "search_semantic", query="api design", conversation_type="plan")
    assert API_PLAN in paths(answer, "source_path")
    assert {result["type"] for result in answer["results"]} == {"plan"}


async def test_seed_003_semantic_search_filters_by_month(seed_003):
    answer = await call(seed_003, "search_semantic", query="kubernetes", date_range="2025-11")
    assert paths(answer, "source_path")[0] == K8S_NOVEMBER
    assert all(result["date"].startswith("2025-11") for result in answer["results"])
    assert K8S_OCTOBER not in paths(answer, "source_path")


async def test_seed_003_semantic_search_without_embeddings_is_success_with_no_results(seed_000):
    answer = await call(seed_000, "search_semantic", query="authentication patterns")
    assert answer == {"success": True, "num_results": 0, "results": []}


def _jwt_names(workspace: Path) -> list[str]:
    """Every way to name conversation A: its folder and each of its files, relative and absolute."""
    root = workspace.resolve()
    files = [f"{JWT}/chat.md", f"{JWT}/notes.md"]
    return [JWT, *files, str(root / JWT), *(str(root / name) for name in files)]


async def test_seed_003_get_similar_ranks_the_other_auth_conversations_for_any_path_of_a_conversation(seed_003):
    by_folder = await call(seed_003, "get_similar", source_path=JWT)
    assert set(paths(by_folder)[:2]) == AUTH - {JWT}
    assert JWT not in paths(by_folder)
    scores = [result["score"] for result in by_folder["results"]]
    assert all(isinstance(score, float) for score in scores) and scores == sorted(scores, reverse=True)
    for name in _jwt_names(seed_003):
        assert await call(seed_003, "get_similar", source_path=name) == by_folder, name
        assert await call(seed_003, "get_similar", document=name, limit=2) == {
            **by_folder,
            "num_results": 2,
            "results": by_folder["results"][:2],
        }, name


async def test_seed_003_any_path_of_a_conversation_names_it_for_every_tool_that_takes_a_document(seed_003):
    document = await call(seed_003, "get_document", document=JWT)
    conversation = await call(seed_003, "get_conversation", document=JWT)
    similar = await call(seed_003, "search", mode="similar", document=JWT)
    assert document["path"] == JWT and conversation["document_id"] == document["id"] and similar["results"]
    datasette = await started_datasette(archive_path(seed_003))
    for name in _jwt_names(seed_003):
        assert await call(seed_003, "get_document", document=name) == document, name
        assert await call(seed_003, "get_conversation", document=name) == conversation, name
        assert await call(seed_003, "search", mode="similar", document=name) == similar, name
        assert await call(seed_003, "search", mode="similar", source_path=name) == similar, name
        found = await datasette.client.get("/archive/find_document.json", params={"document": name, "_shape": "array"})
        assert [row["id"] for row in found.json()] == [document["id"]], name
        rest = await datasette.client.get("/api/search", params={"mode": "similar", "document": name})
        assert rest.json() == similar, name


async def test_seed_003_get_similar_of_a_document_not_in_the_archive_is_document_not_found(seed_003):
    for name in ("conversations/nope", f"{JWT}/missing.md", "42424242"):
        body = await failure(seed_003, "get_similar", source_path=name)
        assert body["code"] == "DOCUMENT_NOT_FOUND" and f"Document not found: {name}" in body["error"]


async def test_seed_003_embedding_status_reports_chunks_documents_the_archive_and_recent_embeddings(seed_003):
    status = await call(seed_003, "get_embedding_status")
    assert status["success"] is True and status["num_documents"] == 9  # the conversations
    assert status["total_chunks"] >= 9 and status["db_path"] == str(archive_path(seed_003).resolve())
    assert status["recent_embeddings"]
    for entry in status["recent_embeddings"]:
        assert dt.datetime.fromisoformat(entry["embedded_at"]) <= dt.datetime.now(dt.UTC)


async def test_seed_003_workspace_path_selects_an_allowed_workspace_and_defaults_to_the_servers(seed_003, seed_000):
    own = await call(seed_000, "search_semantic", query="authentication patterns", allowed=(seed_003,))
    assert own["results"] == []  # the server's workspace has no embeddings
    other = await call(
        seed_000, "search_semantic", query="authentication patterns", workspace_path=str(seed_003), allowed=(seed_003,)
    )
    assert set(paths(other, "source_path")[:3]) == AUTH
    async with _server(seed_000) as client:
        refused = await client.call_tool("search_semantic", {"query": "auth", "workspace_path": str(seed_003)})
    assert refused.is_error and refused.structured_content["code"] == "DIRECTORY_NOT_FOUND"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("embed_document", {"path": "nonexistent/path"}),
        ("search_semantic", {"query": ""}),
        ("search_semantic", {"query": "auth", "date_range": "2025-11-1"}),
        ("get_similar", {"source_path": "nonexistent/path"}),
        ("get_similar", {"source_path": ""}),
        ("get_embedding_status", {"workspace_path": "/nonexistent/workspace"}),
        ("embed_workspace", {"workspace_path": "/nonexistent/workspace"}),
    ],
)
async def test_seed_003_every_rag_tool_fails_with_success_false_and_a_descriptive_error(seed_003, tool, arguments):
    await failure(seed_003, tool, **arguments)


# --- hostile paths: a document is named only by the paths the index recorded -------------------

OUTSIDE_SECRET = "topsecret outside the workspace"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seed 003's conversations beside a folder outside the workspace, and a link to it inside."""
    root = tmp_path_factory.mktemp("hostile")
    write_files(root / "outside", {"secret.md": f"# Secret\n\n{OUTSIDE_SECRET}\n"})
    workspace = write_files(root / "workspace", SEED_003)
    (workspace / "notes").mkdir()
    (workspace / "notes" / "escape.md").symlink_to(root / "outside" / "secret.md")
    index_workspace(workspace)
    return workspace


def _hostile_names(workspace: Path) -> list[str]:
    root = workspace.resolve()
    return [
        f"{JWT}/../../2025-11-12/001-oauth-flow/chat.md",  # inside, but only by '..'
        f"{JWT}/./chat.md",
        f"{OAUTH}/../001-oauth-flow",
        "../outside/secret.md",
        f"{JWT}/../../../../outside/secret.md",
        str(root.parent / "outside" / "secret.md"),
        f"{root}/../outside/secret.md",
        f"{root}/{JWT}/../../../../outside/secret.md",
        f"{root}-other/{JWT}/chat.md",  # a sibling folder whose name starts with the workspace's
        "notes/escape.md",  # a link out of the workspace: skipped by the index
        str(root / "notes" / "escape.md"),
        "/etc/passwd",
        f"{JWT}/chat.md\x00",
        f"{JWT}\x00/chat.md",
        "\x00",
        f"{JWT}/" + "a" * 4000,
        "/",
        str(root),
        f"{root}/",
        ".",
        "~",
        "-1",
        "9" * 30,
    ]


async def test_no_hostile_path_names_a_document_for_any_tool(hostile):
    for name in _hostile_names(hostile):
        for tool, arguments in (
            ("get_document", {"document": name}),
            ("get_conversation", {"document": name}),
            ("get_similar", {"source_path": name}),
            ("search", {"mode": "similar", "document": name}),
        ):
            body = await failure(hostile, tool, **arguments)
            assert body["code"] == "DOCUMENT_NOT_FOUND", (tool, name, body)
            assert OUTSIDE_SECRET not in json.dumps(body), (tool, name)


async def test_an_over_long_path_is_refused_before_any_lookup(hostile):
    for tool, argument in (
        ("get_document", "document"),
        ("get_similar", "source_path"),
        ("get_conversation", "document"),
    ):
        body = await failure(hostile, tool, **{argument: f"{JWT}/" + "a" * 5000})
        assert body["code"] == "INVALID_PARAMETER" and "too long" in body["error"], tool


async def test_hostile_paths_name_nothing_over_rest_either(hostile):
    datasette = await started_datasette(archive_path(hostile))
    for name in _hostile_names(hostile):
        for query in ("find_document", "get_document", "similar", "get_conversation"):
            response = await datasette.client.get(f"/archive/{query}.json", params={"document": name})
            assert response.status_code == 400 and response.json()["code"] == "DOCUMENT_NOT_FOUND", (query, name)
            assert OUTSIDE_SECRET not in response.text


def test_every_way_to_name_a_document_is_an_indexed_lookup(hostile):
    """The document lookup reads no table whole: each of its branches searches an index."""
    for name in ("find_document", "get_document", "similar", "get_conversation"):
        sql = catalog.sql_for(name)
        conn = runner.connect(archive_path(hostile))
        params = {param: "" for param in re.findall(r":(\w+)", sql)} | {"document": f"{JWT}/chat.md"}
        plan = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()]
        conn.close()
        scans = [step for step in plan if step.startswith("SCAN") and step.split()[1] not in ("named", "target")]
        assert not [step for step in scans if re.search(r"\b(documents|files|d|f)\b", step)], (name, plan)
        assert any("files" in step and "USING" in step for step in plan), (name, plan)


# --- seed 004: one search over the tracker's entities, and its REST endpoint ----------------------

SEED_004 = [
    {
        "entity_type": "product",
        "entity_id": 598,
        "title": "Canvas Editor",
        "body": "Frames with borders.",
        "product_id": 598,
    },
    {
        "entity_type": "product",
        "entity_id": 601,
        "title": "Meeting Rooms",
        "body": "Room controllers.",
        "product_id": 601,
    },
    {
        "entity_type": "feature",
        "entity_id": 12345,
        "title": "Borders & Corners on Media & Frames",
        "body": "Border width, border colour, border style and corner radius on images and frames.",
        "product_id": 598,
        "timestamp": None,
    },
    {
        "entity_type": "feature",
        "entity_id": 12346,
        "title": "Video mode",
        "body": "Video in frames.",
        "product_id": 601,
    },
    {
        "entity_type": "bug",
        "entity_id": 2342289,
        "title": "'Presentation' design has no 'Border style' option",
        "body": "The style picker is missing in presentation designs.",
        "product_id": 601,
        "timestamp": _ago(2),
    },
    {
        "entity_type": "bug",
        "entity_id": 2342290,
        "title": "Exported PDFs lose their borders",
        "body": "After an export to PDF the frames have no outline; the layout is otherwise intact, and the "
        "colours and fonts are kept as they were designed.",
        "product_id": 700,
        "timestamp": _ago(40),
    },
    {
        "entity_type": "test",
        "entity_id": 901,
        "title": "Regression run: corners",
        "body": "Exploratory test of frame borders and rounded corners on every design type, in both products.",
        "product_id": 598,
        "timestamp": _ago(1),
    },
    {"entity_type": "test", "entity_id": 902, "title": "Video smoke test", "body": "Playback.", "product_id": 601},
    # a tracker holds many more entities than match a word: BM25 weighs a rare word high
    *(
        {
            "entity_type": "test",
            "entity_id": 800 + n,
            "title": f"Smoke run {n}",
            "body": f"Sign-in, playback and export checks, run {n}.",
            "product_id": 601,
        }
        for n in range(30)
    ),
]


@pytest.fixture(scope="module")
def seed_004(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _indexed(tmp_path_factory, "seed_004", {"records/tracker.jsonl": _lines(*SEED_004)})


def entities(answer: dict[str, Any]) -> list[tuple[str, str]]:
    return [(result["entity_type"], result["entity_id"]) for result in answer["results"]]


# "borders" by BM25: the feature says it four times, the product once in three words, the first bug once
# in a short text, the test once in a longer one, the second bug once in a long one
BORDERS = [
    ("feature", "12345"),
    ("product", "598"),
    ("bug", "2342289"),
    ("test", "901"),
    ("bug", "2342290"),
]


async def test_seed_004_search_results_carry_entity_type_entity_id_title_score_and_rank(seed_004):
    answer = await call(seed_004, "search", query="borders")
    assert (answer["query"], answer["total"]) == ("borders", 5)
    assert entities(answer) == BORDERS
    keyword = await call(seed_004, "search", query="borders", mode="keyword")
    assert entities(keyword) == BORDERS  # sorted by BM25 relevance (without embeddings, hybrid is BM25's order)
    by_id = {(str(record["entity_type"]), str(record["entity_id"])): record for record in SEED_004}
    for rank, result in enumerate(answer["results"], start=1):
        assert {"entity_type", "entity_id", "title", "score", "rank"} <= set(result)
        assert result["rank"] == rank and isinstance(result["score"], float)
        assert result["title"] == by_id[(result["entity_type"], result["entity_id"])]["title"]
        assert (result["kind"], result["type"]) == ("record", result["entity_type"])
    for answered in (answer, keyword):
        scores = [result["score"] for result in answered["results"]]
        assert scores == sorted(scores, reverse=True)


async def test_seed_004_entities_and_product_ids_filter_the_results(seed_004):
    types = await call(seed_004, "search", query="borders", entities=["feature", "bug"])
    assert entities(types) == [entity for entity in BORDERS if entity[0] in ("feature", "bug")]
    products = await call(seed_004, "search", query="borders", product_ids=[598, 601])
    assert entities(products) == [entity for entity in BORDERS if entity[1] != "2342290"]  # product 700's


async def test_seed_004_dates_iso_and_natural_language_filter_out_what_has_no_timestamp(seed_004):
    last_week = await call(seed_004, "search", query="borders", start_date="last week")
    assert entities(last_week) == [("bug", "2342289"), ("test", "901")]
    iso = await call(seed_004, "search", query="borders", start_date="2024-01-01", end_date="today")
    assert entities(iso) == [("bug", "2342289"), ("test", "901"), ("bug", "2342290")]
    yesterday = await call(seed_004, "search", query="borders", start_date="yesterday", end_date="today")
    assert entities(yesterday) == [("test", "901")]


async def test_seed_004_limit_pages_the_ranking(seed_004):
    answer = await call(seed_004, "search", query="borders", limit=2)
    assert entities(answer) == BORDERS[:2] and [r["rank"] for r in answer["results"]] == [1, 2]
    assert (answer["total"], answer["has_more"]) == (5, True)


async def test_seed_004_bad_input_gets_the_seeds_friendly_errors(seed_004):
    empty = await failure(seed_004, "search", query="")
    assert empty["code"] == "INVALID_QUERY" and "Search query cannot be empty" in empty["error"]
    assert "💡 Try: search(query=" in empty["error"]
    syntax = await failure(seed_004, "search", query='"borders AND', match_mode="raw")
    assert syntax["code"] == "INVALID_SEARCH_SYNTAX" and "Invalid search syntax" in syntax["error"]
    assert "fts5:" not in syntax["error"] and "syntax error near" not in syntax["error"]
    entity = await failure(seed_004, "search", query="borders", entities=["foo"])
    assert entity["code"] == "INVALID_ENTITY_TYPE" and "Invalid entity type: 'foo'" in entity["error"]
    assert "product, feature, test, bug" in entity["error"]


async def test_seed_004_rest_endpoint_returns_the_same_json_as_the_mcp_tool(seed_004):
    datasette = await started_datasette(archive_path(seed_004))
    for params, arguments in (
        ({"query": "borders", "entities": "feature,bug"}, {"query": "borders", "entities": ["feature", "bug"]}),
        (
            {"query": "video mode", "product_ids": "598,601", "start_date": "last week"},
            {"query": "video mode", "product_ids": [598, 601], "start_date": "last week"},
        ),
        ({"query": "borders", "limit": "20"}, {"query": "borders", "limit": 20}),
    ):
        rest = await datasette.client.get("/api/search", params=params)
        assert rest.status_code == 200, rest.text
        assert rest.json() == await call(seed_004, "search", **arguments), params
    first = (await datasette.client.get("/api/search", params={"query": "borders", "entities": "feature,bug"})).json()
    assert entities(first) == [entity for entity in BORDERS if entity[0] in ("feature", "bug")]
    bad = await datasette.client.get("/api/search", params={"query": "borders", "entities": "feature,foo"})
    assert bad.status_code == 400
    assert bad.json() == await failure(seed_004, "search", query="borders", entities=["feature", "foo"])
