"""Archivist's usage of Claude Code's logs against ccusage's (the npm package, run as people run it).

ccusage reads the same sample sessions (``CLAUDE_CONFIG_DIR``), offline and in UTC. Input and
cache tokens agree exactly, day by day and model by model. Output differs on purpose: Claude
Code writes one API message's usage on each of its content lines, its output_tokens growing
from line to line; ccusage keeps the first line of a message (its deduplication), Archivist
the last, which holds the message's whole output. Priced at the same counts, the two price
data agree within 1%.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import defaultdict

import pytest
from conftest import ROOT, sample_source, write_files

from archivist.archive import prices
from archivist.archive.indexer import index_workspace
from archivist.queries.runner import Archive

CCUSAGE = ROOT / "mcp-clients" / "node_modules" / ".bin" / "ccusage"


@pytest.fixture(scope="module")
def ccusage_daily(tmp_path_factory):
    assert CCUSAGE.exists(), "ccusage is installed with the MCP clients (make test installs them)"
    home = tmp_path_factory.mktemp("home")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(sample_source("claude-code").parent),
        "TZ": "UTC",
    }
    done = subprocess.run(
        [str(CCUSAGE), "daily", "--json", "--offline", "--timezone", "UTC", "--breakdown"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["daily"]


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    workspace = write_files(tmp_path_factory.mktemp("ccusage") / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[("claude-code", sample_source("claude-code"))])
    with Archive.for_workspace(workspace) as opened:
        yield opened


def ours_by_day_and_model(archive) -> dict[tuple[str, str], dict]:
    found = {}
    for day in archive.run("usage", {"group_by": "day"}):
        for model in archive.run("usage", {"group_by": "model", "start_date": day["key"], "end_date": day["key"]}):
            found[day["key"], model["key"]] = model
    return found


def theirs_by_day_and_model(daily) -> dict[tuple[str, str], dict]:
    return {(day["date"], model["modelName"]): model for day in daily for model in day["modelBreakdowns"]}


def test_input_and_cache_tokens_are_ccusages_day_by_day_and_model_by_model(archive, ccusage_daily):
    ours, theirs = ours_by_day_and_model(archive), theirs_by_day_and_model(ccusage_daily)
    assert set(ours) == set(theirs) and theirs
    for key, model in theirs.items():
        assert ours[key]["input_tokens"] == model["inputTokens"], key
        assert ours[key]["cache_write_tokens"] == model["cacheCreationTokens"], key
        assert ours[key]["cache_read_tokens"] == model["cacheReadTokens"], key


def output_counted_both_ways() -> tuple[dict[str, int], dict[str, int]]:
    """Each model's output tokens from the raw lines: each API message (message.id and requestId)
    by its first line, and by its last."""
    responses: dict[tuple[str, str], tuple[str, int, int]] = {}
    for file in sorted(sample_source("claude-code").rglob("*.jsonl")):
        for line in file.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            message = record.get("message")
            if record.get("type") != "assistant" or not isinstance(message, dict) or "usage" not in message:
                continue
            if message.get("model") == "<synthetic>":
                continue
            key = (str(message.get("id")), str(record.get("requestId")))
            output = message["usage"]["output_tokens"]
            model, first, _ = responses.get(key, (message["model"], output, output))
            responses[key] = (model, first, output)
    first_lines, last_lines = defaultdict(int), defaultdict(int)
    for model, first, last in responses.values():
        first_lines[model] += first
        last_lines[model] += last
    return dict(first_lines), dict(last_lines)


def test_output_is_each_messages_last_line_where_ccusage_keeps_its_first(archive, ccusage_daily):
    first_lines, last_lines = output_counted_both_ways()
    ours = {model: row["output_tokens"] for (_, model), row in ours_by_day_and_model(archive).items()}
    theirs = {model: row["outputTokens"] for (_, model), row in theirs_by_day_and_model(ccusage_daily).items()}
    assert theirs == first_lines and ours == last_lines
    assert sum(ours.values()) > sum(theirs.values())  # the sample's responses grow from their first line


def test_priced_at_the_same_counts_the_two_price_data_agree_within_one_percent(ccusage_daily):
    from archivist.agents import Usage

    compared = 0
    for (day, model), counts in theirs_by_day_and_model(ccusage_daily).items():
        used = Usage(
            input=counts["inputTokens"],
            output=counts["outputTokens"],
            cache_write=counts["cacheCreationTokens"],
            cache_read=counts["cacheReadTokens"],
        )
        ours = prices.price(model, used, f"{day}T12:00:00Z")
        if ours is None or not counts["cost"]:
            continue  # a model one of the two does not price
        assert ours == pytest.approx(counts["cost"], rel=0.01), (day, model)
        compared += 1
    assert compared == 2
