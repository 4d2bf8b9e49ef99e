"""Token usage and attachments: what each kind's log records, counted once, stored and totalled."""

from __future__ import annotations

import html
import json
import re

import pytest
import sqlite_utils
from conftest import LOGS, sample_source, started_datasette, write_files
from hypothesis import given
from hypothesis import strategies as st
from test_agentlogs_codex import event, meta, turn

from archivist.agents import (
    Attachment,
    Usage,
    aider,
    attachment,
    attachments_of,
    cline,
    codex,
    continue_dev,
    gemini_cli,
    llm_logs,
    opencode,
    url_attachment,
    usage,
)
from archivist.archive import prices
from archivist.archive.indexer import index_workspace
from archivist.mcp.outputs import conversation_payload
from archivist.queries.newest import newest_day, opening_range
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

# -- the values ---------------------------------------------------------------------------------


@given(st.one_of(st.none(), st.booleans(), st.text(max_size=5), st.floats(), st.integers(), st.lists(st.integers())))
def test_a_count_that_is_no_whole_number_counts_nothing(value):
    found = usage(input=value, output=value, cache_write=value, cache_read=value, cost=value)
    for count in (found.input, found.output, found.cache_write, found.cache_read) if found else ():
        assert isinstance(count, int) and not isinstance(count, bool) and 0 <= count <= 10**12
    if found is not None and found.cost is not None:
        assert 0 <= found.cost <= 10**6


def test_usage_adds_up_and_no_counts_is_none():
    assert usage() is None and usage(0, 0, 0, 0) is None and usage(True, "12", -5, 1.5) is None
    assert usage(10, 2.0) == Usage(input=10, output=2)
    total = Usage(input=1, output=2, cache_write=3, cache_read=4) + Usage(input=10, cost=0.5)
    assert total == Usage(input=11, output=2, cache_write=3, cache_read=4, cost=0.5)
    assert (Usage(input=1) + Usage(output=1)).cost is None  # no cost stated is not a cost of 0


def test_an_attachment_keeps_its_size_never_its_data():
    data = "data:image/png;base64," + "QUJD" * 1000  # 3,000 bytes
    found = url_attachment(data)
    assert found == Attachment("image/png", None, 3000)
    assert "QUJD" not in repr(found) and found.placeholder() == "[image]"
    assert url_attachment({"url": "https://example.com/a.png"}) == Attachment("image", "https://example.com/a.png")
    assert attachment("application/pdf", "notes.pdf", 2048).placeholder() == "[file: notes.pdf]"
    assert attachment(None, "x" * 1000).name == "x" * 300  # a name is bounded
    assert attachment("image/png", size=-1).size == 0


def test_the_model_apis_shapes_of_an_attachment():
    blocks = [
        {"type": "text", "text": "see"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "QUJDRA=="}},
        {"type": "document", "title": "spec.pdf", "source": {"media_type": "application/pdf", "data": "QUJD"}},
        {"type": "input_image", "image_url": "data:image/webp;base64,QUJD"},
        {"type": "input_file", "filename": "data.csv", "file_data": "QUJDQUJD"},
        {"inlineData": {"mimeType": "image/gif", "data": "QUJD"}},
        {"fileData": {"mimeType": "video/mp4", "fileUri": "gs://bucket/clip.mp4"}},
        {"type": "image", "source": "not an object"},
        "a string part",
    ]
    assert attachments_of(blocks) == [
        Attachment("image/jpeg", None, 4),
        Attachment("application/pdf", "spec.pdf", 3),
        Attachment("image/webp", None, 3),
        Attachment("file", "data.csv", 6),
        Attachment("image/gif", None, 3),
        Attachment("video/mp4", "gs://bucket/clip.mp4", None),
    ]
    assert attachments_of(None) == [] and attachments_of({"inlineData": []}) == []


# -- each kind's log ----------------------------------------------------------------------------


def total(session) -> Usage:
    return sum((message.usage for message in session.messages if message.usage), Usage())


def test_codex_counts_each_response_once_and_totals_its_last_event():
    rollout = next(sample_source("codex").rglob("*.jsonl"))
    last = [line for line in rollout.read_text(encoding="utf-8").splitlines() if '"total_token_usage"' in line][-1]
    counts = json.loads(last)["payload"]["info"]["total_token_usage"]
    (session,) = codex.read(sample_source("codex"))
    assert total(session) == Usage(
        input=counts["input_tokens"] - counts["cached_input_tokens"],
        output=counts["output_tokens"],
        cache_read=counts["cached_input_tokens"],
    )
    assert all(message.role == "assistant" for message in session.messages if message.usage)


def token_count(at: str, total: tuple[int, int, int], last: tuple[int, int, int]) -> str:
    def counts(values):
        return dict(zip(("input_tokens", "cached_input_tokens", "output_tokens"), values, strict=True))

    info = {"total_token_usage": counts(total), "last_token_usage": counts(last), "model_context_window": 272000}
    return event(at, type="token_count", info=info, rate_limits=None)


def test_codex_writes_a_token_count_twice_and_it_is_counted_once(tmp_path):
    at = "2025-10-29T01:00:05.000Z"
    text = (
        meta()
        + turn("first question", "first answer", 0)
        + event(at, type="token_count", info=None, rate_limits=None)
        + token_count(at, (1000, 600, 50), (1000, 600, 50))
        + token_count(at, (1000, 600, 50), (1000, 600, 50))  # the copy
        + turn("second question", "second answer", 30)
        + token_count(at, (2500, 1600, 90), (1500, 1000, 40))
        + token_count(at, (2500, 1600, 90), (1500, 1000, 40))
    )
    (tmp_path / "rollout-2025-10-29T00-59-38-x.jsonl").write_text(text, encoding="utf-8")
    (session,) = codex.read(tmp_path)
    replies = [message.usage for message in session.messages if message.role == "assistant"]
    assert replies == [Usage(input=400, output=50, cache_read=600), Usage(input=500, output=40, cache_read=1000)]
    assert total(session) == Usage(input=900, output=90, cache_read=1600)  # the last event's total


def test_gemini_counts_cached_input_apart_and_thoughts_as_output():
    (session,) = gemini_cli.read(sample_source("gemini-cli"))
    files = sorted(sample_source("gemini-cli").rglob("session-*.json"))
    tokens = [m["tokens"] for m in json.loads(files[0].read_text(encoding="utf-8"))["messages"] if "tokens" in m]
    assert total(session) == Usage(
        input=sum(t["input"] - t["cached"] + t["tool"] for t in tokens),
        output=sum(t["output"] + t["thoughts"] for t in tokens),
        cache_read=sum(t["cached"] for t in tokens),
    )


def test_aider_reads_its_tokens_and_cost_lines(tmp_path):
    history = (
        "# aider chat started at 2025-05-12 14:03:27\n\n"
        "#### fix the bug  \n\nDone.\n\n"
        "> Tokens: 12k sent, 2.5k cache write, 1.2M cache hit, 45 received. Cost: $0.0123 message, $0.05 session.  \n\n"
        "#### and the test  \n\nAdded.\n\n"
        "> Tokens: 950 sent, 12 received.  \n"
    )
    (tmp_path / ".aider.chat.history.md").write_text(history, encoding="utf-8")
    (session,) = aider.read(tmp_path)
    assert [m.usage for m in session.messages if m.role == "assistant"] == [
        Usage(input=0, output=45, cache_write=2500, cache_read=1_200_000, cost=0.0123),
        Usage(input=950, output=12),
    ]
    sample = [total(s) for s in aider.read(sample_source("aider"))]
    written = re.findall(
        r"Tokens: ([\d.]+)k sent, (\d+) received\. Cost: \$([\d.]+) message",
        (LOGS / "aider" / ".aider.chat.history.md").read_text(),
    )
    assert sum(u.input for u in sample) == round(sum(float(sent) * 1000 for sent, _, _ in written))
    assert sum(u.output for u in sample) == sum(int(received) for _, received, _ in written)


def test_opencode_and_cline_keep_the_usage_and_cost_they_state():
    by_title = {s.title: total(s) for s in opencode.read(sample_source("opencode"))}
    assert by_title["Rate limit the shorten endpoint"] == Usage(
        input=18200, output=950, cache_write=8800, cache_read=8800, cost=pytest.approx(0.0412)
    )
    (task,) = cline.read(sample_source("cline"))
    assert total(task) == Usage(input=12450, output=96, cache_write=11800, cost=0.0462)


def test_an_opencode_file_part_is_an_attachment():
    attached = [a for s in opencode.read(sample_source("opencode")) for m in s.messages for a in m.attachments]
    assert attached == [Attachment("image/png", "curl-output.png", attached[0].size)]
    texts = " ".join(m.text for s in opencode.read(sample_source("opencode")) for m in s.messages)
    assert "[image: curl-output.png]" in texts and "base64" not in texts


# -- stored, totalled and shown ----------------------------------------------------------------

USAGE_KINDS = ("codex", "gemini-cli", "aider", "opencode", "cline")


@pytest.fixture(scope="module")
def usage_archive(tmp_path_factory):
    workspace = write_files(tmp_path_factory.mktemp("usage") / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[(kind, sample_source(kind)) for kind in USAGE_KINDS])
    return workspace


def test_each_message_stores_its_usage_and_each_session_totals_it(usage_archive):
    db = sqlite_utils.Database(archive_path(usage_archive))
    sessions = {
        row["id"]: json.loads(row["extra"])
        for row in db.query("select id, extra from documents where source like 'log:%'")
    }
    totalled = 0
    for document_id, extra in sessions.items():
        (sums,) = db.query(
            "select sum(input_tokens) as input, sum(output_tokens) as output, sum(cache_write_tokens) as cache_write, "
            "sum(cache_read_tokens) as cache_read, coalesce(sum(cache_write_1h_tokens), 0) as cache_write_1h, "
            "sum(cost) as cost, count(input_tokens) as responses "
            "from messages where document_id = ?",
            [document_id],
        )
        if not sums["responses"]:
            assert extra["usage"] is None
            continue
        totalled += 1
        assert extra["usage"] == pytest.approx(sums)
    assert totalled == 7  # every session of those kinds' samples records usage but two OpenCode ones
    unused = db.execute("select count(*) from messages where role != 'assistant' and input_tokens is not null")
    assert unused.fetchone()[0] == 0  # usage is a response's


def test_a_conversation_gives_each_message_its_usage_and_attachments(usage_archive):
    db = sqlite_utils.Database(archive_path(usage_archive))
    (document_id,) = db.execute("select id from documents where title = 'Rate limit the shorten endpoint'").fetchone()
    with Archive.for_workspace(usage_archive) as archive:
        rows = archive.run("get_conversation", {"document": str(document_id)})
    payload = conversation_payload(rows, 0, 50)
    used = [m for m in payload["messages"] if "usage" in m]
    attached = [m for m in payload["messages"] if "attachments" in m]
    assert used and all(
        m["role"] == "assistant" and set(m["usage"]) == {"input", "output", "cache_write", "cache_read", "cost"}
        for m in used
    )
    assert attached and attached[0]["attachments"][0]["name"] == "curl-output.png"
    assert all("usage" not in m for m in payload["messages"] if m["role"] == "user")  # only where it has one


async def test_the_session_page_shows_each_responses_tokens_the_total_and_the_attachments(usage_archive):
    from test_conversation_page import messages, meta, page_of

    db = sqlite_utils.Database(archive_path(usage_archive))
    (document_id,) = db.execute("select id from documents where title = 'Rate limit the shorten endpoint'").fetchone()
    datasette = await started_datasette(archive_path(usage_archive))
    page = await page_of(datasette, f"/document/{document_id}")
    assert meta(page)["Tokens"] == "18,200 in · 950 out · 8,800 cache write · 8,800 cache read · $0.0412"
    shown = messages(page)
    used = [seq for seq, block in shown.items() if 'class="archivist-usage"' in block]
    assert used and all('data-role="assistant"' in shown[seq] for seq in used)
    assert any("image/png curl-output.png" in block and "archivist-attachments" in block for block in shown.values())


def test_llm_keeps_each_responses_tokens_and_each_turns(tmp_path):
    import sqlite3

    from test_agentlogs_llm import build_legacy, build_store

    database = build_legacy(tmp_path / "logs.db")
    with sqlite3.connect(database) as db:
        build_store(db)
        db.execute(  # OpenAI's cached input is counted in its input
            "UPDATE responses SET input_tokens = 1200, output_tokens = 80, "
            'token_details = \'{"prompt_tokens_details": {"cached_tokens": 1000}}\' WHERE id = ?',
            ["01jvp3k5yb0c2e4g6j8m0p2r4t"],
        )
        db.execute(  # Anthropic's cache is apart from its input
            "UPDATE turns SET input_tokens = 30, output_tokens = 400, token_details = "
            '\'{"cache_creation_input_tokens": 2000, "cache_read_input_tokens": 9000}\' WHERE id = ?',
            ["01jw0t0000000000000000000a"],
        )
        db.execute(
            "UPDATE turns SET input_tokens = 5, token_details = 'not json' WHERE id = ?", ["01jvzt0000000000000000000a"]
        )
    db.close()
    found = [message.usage for session in llm_logs.read(database) for message in session.messages if message.usage]
    assert sorted(found, key=repr) == sorted(
        [
            Usage(input=200, output=80, cache_read=1000),
            Usage(input=30, output=400, cache_write=2000, cache_read=9000),
            Usage(input=5),
        ],
        key=repr,
    )


def test_continue_keeps_an_answers_usage_as_openai_counts_it(tmp_path):
    from test_agentlogs_continue import item, write

    answer = item("assistant", "Done.")
    answer["message"]["usage"] = {
        "promptTokens": 5000,
        "completionTokens": 120,
        "promptTokensDetails": {"cachedTokens": 4000, "cacheWriteTokens": 300},
    }
    broken = item("assistant", "Again.")
    broken["message"]["usage"] = {"promptTokens": "many", "completionTokens": -1, "promptTokensDetails": []}
    write(tmp_path, "s1", {"sessionId": "s1", "title": "t", "history": [item("user", "do it"), answer, broken]})
    (session,) = continue_dev.read(tmp_path)
    assert [m.usage for m in session.messages] == [
        None,
        Usage(input=1000, output=120, cache_write=300, cache_read=4000),
        None,
    ]


# -- the usage query ---------------------------------------------------------------------------

GROUPS = ("day", "month", "block", "model", "agent", "project")
TOKENS = ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")


def usage_rows(workspace, **params):
    with Archive.for_workspace(workspace) as archive:
        return archive.run("usage", {key: str(value) for key, value in params.items()})


def test_every_grouping_counts_every_response_once(usage_archive):
    db = sqlite_utils.Database(archive_path(usage_archive))
    (stored,) = db.query(
        "select count(*) as responses, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens, "
        "sum(cache_write_tokens) as cache_write_tokens, sum(cache_read_tokens) as cache_read_tokens, "
        "round(sum(price), 6) as cost from messages where input_tokens is not null"
    )
    for group in GROUPS:
        rows = usage_rows(usage_archive, group_by=group)
        assert sum(row["responses"] for row in rows) == stored["responses"], group  # aider's: by its session's start
        for column in TOKENS:
            assert sum(row[column] for row in rows) == stored[column], (group, column)
        assert sum(row["cost"] or 0 for row in rows) == pytest.approx(stored["cost"], abs=1e-5), group
        assert all(row["price_data"] == prices.data_version() for row in rows)
    days = [row["key"] for row in usage_rows(usage_archive)]
    assert days == sorted(days) and all(re.fullmatch(r"\d{4}-\d\d-\d\d", day) for day in days)
    models = usage_rows(usage_archive, group_by="model")
    assert [row["total_tokens"] for row in models] == sorted((row["total_tokens"] for row in models), reverse=True)


def test_a_response_is_priced_from_the_price_data_and_an_unknown_model_never(usage_archive):
    import genai_prices

    db = sqlite_utils.Database(archive_path(usage_archive))
    for row in db.query(
        "select model, timestamp, input_tokens, output_tokens, cache_write_tokens, cache_read_tokens, price from messages where input_tokens is not null and model = 'gpt-5-codex'"
    ):
        counts = genai_prices.Usage(
            input_tokens=row["input_tokens"] + row["cache_read_tokens"] + row["cache_write_tokens"],
            output_tokens=row["output_tokens"],
            cache_read_tokens=row["cache_read_tokens"],
            cache_write_tokens=row["cache_write_tokens"],
        )
        assert row["price"] == pytest.approx(float(genai_prices.calc_price(counts, "gpt-5-codex").total_price))
    assert prices.price("no-such-model-anywhere", Usage(input=10), "2025-11-20T00:00:00Z") is None
    assert prices.price(None, Usage(input=10), None) is None


def test_a_date_range_agents_and_projects_narrow_what_is_counted(usage_archive):
    everything = {row["key"]: row for row in usage_rows(usage_archive, group_by="agent")}
    only_codex = usage_rows(usage_archive, group_by="agent", agents="codex")
    assert [row["key"] for row in only_codex] == ["codex"] and only_codex[0] == everything["codex"]
    by_name = usage_rows(usage_archive, group_by="project", projects="report-service")
    assert [row["key"] for row in by_name] == ["/home/dev/src/report-service"]
    day = usage_rows(usage_archive, start_date="2025-11-20", end_date="2025-11-20")
    assert [row["key"] for row in day] == ["2025-11-20"]
    assert usage_rows(usage_archive, start_date="2030-01-01") == []


def test_a_block_is_five_hours_from_the_first_response_no_block_holds(tmp_path):
    from test_agentlogs_codex import meta as codex_meta

    def response(at: str, total: int) -> str:
        return turn(f"question at {at}", "an answer", 0).replace("2025-10-29T01:00:00.000Z", at) + token_count(
            at, (total, 0, 10), (100, 0, 10)
        )

    times = [
        "2025-11-01T08:10:00.000Z",
        "2025-11-01T12:59:00.000Z",
        "2025-11-01T13:05:00.000Z",
        "2025-11-02T01:00:00.000Z",
    ]
    text = codex_meta() + "".join(response(at, 100 * (n + 1)) for n, at in enumerate(times))
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "rollout-2025-11-01T08-10-00-x.jsonl").write_text(text, encoding="utf-8")
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[("codex", logs)])
    blocks = [(row["key"], row["responses"]) for row in usage_rows(workspace, group_by="block")]
    # 08:10 opens 08:00-13:00; 12:59 is in it; 13:05 opens the next; 01:00 the next day another
    assert blocks == [("2025-11-01T08:00:00Z", 2), ("2025-11-01T13:00:00Z", 1), ("2025-11-02T01:00:00Z", 1)]


def test_new_price_data_prices_every_response_again(usage_archive, tmp_path):
    import shutil

    copy = tmp_path / "archive.db"
    shutil.copy(archive_path(usage_archive), copy)
    from archivist.archive.database import Database

    db = Database(copy)
    before = dict(db.execute("select id, price from messages where input_tokens is not null").fetchall())
    db.execute("update messages set price = null")
    db.execute("update archive_meta set value = 'genai-prices 0.0.1' where key = 'price_data'")
    assert prices.price_again(db) == len(before)
    assert dict(db.execute("select id, price from messages where input_tokens is not null").fetchall()) == before
    assert prices.price_again(db) == 0  # the same data: nothing to do
    assert db.execute("select version from price_data").fetchone()[0] == prices.data_version()


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"group_by": "weekday"}, "INVALID_PARAMETER"),
        ({"start_date": "the day after never"}, "INVALID_DATE"),
        ({"start_date": "2025-12-01", "end_date": "2025-11-01"}, "INVALID_DATE"),
        ({"agents": "no-such-agent"}, "INVALID_PARAMETER"),
    ],
)
def test_a_bad_usage_parameter_is_a_clear_error(usage_archive, params, code):
    from archivist.errors import ArchivistError

    with pytest.raises(ArchivistError) as error:
        usage_rows(usage_archive, **params)
    assert error.value.code == code


# -- the command line ---------------------------------------------------------------------------


def cli_run(*args):
    from click.testing import CliRunner

    from archivist.cli import cli

    return CliRunner().invoke(cli, [str(arg) for arg in args])


def test_archivist_usage_prints_the_query_as_a_table_or_json(usage_archive):
    result = cli_run("usage", usage_archive, "--by", "agent", "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    opened = opening_range(newest_day(archive_path(usage_archive)))  # no date: the 30 days to the newest
    assert answer["group_by"] == "agent" and answer["rows"] == [
        {**row, "models": json.loads(row["models"])} for row in usage_rows(usage_archive, group_by="agent", **opened)
    ]
    assert answer["range"]["default"] and answer["range"]["start_date"] == opened["start_date"]
    every = json.loads(cli_run("usage", usage_archive, "--by", "agent", "--json", "--since", "").output)
    assert every["rows"] == [
        {**row, "models": json.loads(row["models"])} for row in usage_rows(usage_archive, group_by="agent")
    ]
    assert answer["totals"]["responses"] == sum(row["responses"] for row in answer["rows"])
    table = cli_run("usage", usage_archive, "--by", "model", "--since", "2025-11-01", "--agent", "codex")
    assert table.exit_code == 0, table.output
    lines = table.output.splitlines()
    assert lines[0].split()[:2] == ["model", "input"] and lines[1].startswith("gpt-5-codex ")
    assert lines[-2].startswith("total ") and lines[-1].startswith("Cost at genai-prices ")


def test_archivist_usage_says_what_is_wrong_with_a_bad_option(usage_archive):
    bad_date = cli_run("usage", usage_archive, "--since", "the day after never")
    assert bad_date.exit_code == 1 and "[INVALID_DATE]" in bad_date.output
    bad_group = cli_run("usage", usage_archive, "--by", "weekday")
    assert bad_group.exit_code == 2 and "'weekday' is not one of" in bad_group.output
    nothing = cli_run("usage", usage_archive, "--since", "2030-01-01")
    assert nothing.exit_code == 0 and nothing.output.startswith("No usage recorded in this range")


# -- the page ------------------------------------------------------------------------------------


async def test_the_usage_page_shows_the_groups_as_bars_and_a_table_with_totals(usage_archive):
    from test_conversation_page import page_of

    datasette = await started_datasette(archive_path(usage_archive))
    page = await page_of(datasette, "/usage?start_date=")  # an empty date: all time
    days = usage_rows(usage_archive)
    assert re.findall(r'<tr data-key="([^"]+)">', page)[: len(days)] == [row["key"] for row in days]
    assert len(re.findall(r'class="bar"', page)) == len(days)
    total = sum(row["total_tokens"] for row in days)
    assert "<th>Total</th>" in page and f"<td>{total:,}</td>" in page
    assert "By model</h2>" in page and "By agent</h2>" in page and f"Cost at {prices.data_version()} prices" in page
    by_model = await page_of(datasette, "/usage?group_by=model&agents=codex")
    assert re.findall(r'<tr data-key="([^"]+)">', by_model)[0] == "gpt-5-codex"
    assert 'class="bar"' not in by_model  # bars are for days, months and blocks


async def test_a_bad_usage_parameter_is_a_400_with_the_querys_message(usage_archive):
    from test_conversation_page import page_of

    datasette = await started_datasette(archive_path(usage_archive))
    page = await page_of(datasette, "/usage?group_by=weekday", status=400)
    assert 'data-code="INVALID_PARAMETER"' in page and "weekday" in page
    page = await page_of(datasette, "/usage?start_date=%3Cscript%3Ealert(1)%3C/script%3E", status=400)
    assert "<script>alert(1)" not in page and "&lt;script&gt;" in page


async def test_a_project_named_with_html_and_slashes_is_text_and_links_to_itself(tmp_path):
    from test_conversation_page import page_of

    from archivist.agents import codex as codex_kind

    hostile = '/home/ana/<img src=x onerror=alert(1)>/a&b "c"'
    rollout = next(sample_source("codex").rglob("*.jsonl")).read_text(encoding="utf-8")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "rollout-2025-11-20T10-14-05-x.jsonl").write_text(
        rollout.replace('"/home/dev/src/report-service"', json.dumps(hostile)), encoding="utf-8"
    )
    assert next(iter(codex_kind.read(logs))).project == hostile
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[("codex", logs)])
    datasette = await started_datasette(archive_path(workspace))
    page = await page_of(datasette, "/usage?group_by=project")
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    link = re.search(r'<a href="([^"]+)">/home/ana/&lt;img', page)[1]
    narrowed = await page_of(datasette, html.unescape(link))
    assert re.findall(r'<tr data-key="([^"]+)">', narrowed)  # the link finds the project's responses


def test_one_hour_cache_writes_are_kept_apart_and_priced_at_their_own_rate(tmp_path):
    """A Claude Code line whose cache writes are for an hour (``ephemeral_1h_input_tokens``) is
    priced as genai-prices prices those (as ccusage and agentsview do), not at the five-minute
    rate; the count stays apart through a repricing by new price data."""
    import genai_prices

    project = tmp_path / "projects" / "-home-dev-p"
    project.mkdir(parents=True)
    usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 1045, "cache_read_input_tokens": 0,
             "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1045}}  # fmt: skip
    lines = [
        {"type": "user", "sessionId": "s1", "uuid": "u1", "timestamp": "2025-11-24T09:00:01Z", "cwd": "/p",
         "message": {"role": "user", "content": "hello"}},
        {"type": "assistant", "sessionId": "s1", "uuid": "a1", "timestamp": "2025-11-24T09:00:03Z", "cwd": "/p",
         "message": {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                     "content": [{"type": "text", "text": "hi"}], "usage": usage}},
    ]  # fmt: skip
    (project / "s1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n"})
    index_workspace(workspace, log_sources=[("claude-code", tmp_path / "projects")])
    db = sqlite_utils.Database(archive_path(workspace))
    (row,) = db.query("select cache_write_tokens, cache_write_1h_tokens, price from messages where price is not null")
    assert (row["cache_write_tokens"], row["cache_write_1h_tokens"]) == (1045, 1045)
    counts = dict(input_tokens=10 + 1045, output_tokens=5, cache_write_tokens=1045)
    one_hour = genai_prices.calc_price(genai_prices.Usage(**counts, cache_write_1h_tokens=1045), "claude-sonnet-4-5")
    five_minutes = genai_prices.calc_price(genai_prices.Usage(**counts), "claude-sonnet-4-5")
    assert row["price"] == pytest.approx(float(one_hour.total_price)) and row["price"] > float(five_minutes.total_price)
    db.execute("UPDATE messages SET price = NULL")
    db.execute("DELETE FROM archive_meta WHERE key = ?", [prices.META_KEY])
    with db.conn:
        prices.price_again(db)  # (as new price data would)
    assert db.execute("select price from messages where price is not null").fetchone()[0] == pytest.approx(row["price"])
