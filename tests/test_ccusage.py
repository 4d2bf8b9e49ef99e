"""Archivist's usage of Claude Code's logs against ccusage's (the npm package, run as people run it).

ccusage reads the same sessions (``CLAUDE_CONFIG_DIR``: the Claude Code samples, and one session
whose cache writes are for an hour), offline and in UTC. Every count agrees exactly, day by day
and model by model: Claude Code writes one API message's usage on each of its content lines, its
output_tokens growing from line to line, and ccusage 20 keeps a message's last line, as Archivist
does. The cost agrees to a hundredth of a cent, one-hour cache writes priced at their own rate.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, sample_source, write_files

from archivist.archive.indexer import index_workspace
from archivist.queries.runner import Archive

CCUSAGE = ROOT / "mcp-clients" / "node_modules" / ".bin" / "ccusage"
ONE_HOUR_DAY = "2025-11-25"


def one_hour_session() -> list[dict]:
    """A Claude Code session of two responses whose cache writes are for an hour, the second
    written on two lines whose output grows."""
    cache = {"ephemeral_5m_input_tokens": 200, "ephemeral_1h_input_tokens": 3000}
    usage = {"input_tokens": 12, "cache_creation_input_tokens": 3200, "cache_read_input_tokens": 4000,
             "cache_creation": cache}  # fmt: skip
    where = {"sessionId": "s1h", "cwd": "/home/dev/src/hour", "version": "2.0.50"}

    def answer(uuid: str, message_id: str, at: str, output: int, text: str) -> dict:
        return {"type": "assistant", "uuid": uuid, "requestId": f"req_{message_id}", "timestamp": at, **where,
                "message": {"id": message_id, "type": "message", "role": "assistant",
                            "model": "claude-opus-4-5-20251101", "content": [{"type": "text", "text": text}],
                            "usage": {**usage, "output_tokens": output}}}  # fmt: skip

    asked = {"role": "user", "content": "Summarise the hour."}
    return [
        {"type": "user", "uuid": "u1", "timestamp": f"{ONE_HOUR_DAY}T09:00:00.000Z", **where, "message": asked},
        answer("a1", "msg_h1", f"{ONE_HOUR_DAY}T09:00:04.000Z", 40, "First."),
        answer("a2", "msg_h2", f"{ONE_HOUR_DAY}T09:01:00.000Z", 7, "Second,"),
        answer("a3", "msg_h2", f"{ONE_HOUR_DAY}T09:01:02.000Z", 95, "Second, whole."),
    ]


@pytest.fixture(scope="module")
def claude_dir(tmp_path_factory) -> Path:
    """A Claude Code folder: the samples' projects, and the one-hour session."""
    folder = tmp_path_factory.mktemp("claude")
    shutil.copytree(sample_source("claude-code"), folder / "projects")
    hour = folder / "projects" / "-home-dev-src-hour"
    hour.mkdir()
    compact = (json.dumps(line, separators=(",", ":")) + "\n" for line in one_hour_session())
    (hour / "s1h.jsonl").write_text("".join(compact))  # as Claude Code writes them
    return folder


@pytest.fixture(scope="module")
def ccusage_daily(tmp_path_factory, claude_dir):
    assert CCUSAGE.exists(), "ccusage is installed with the MCP clients (make test installs them)"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path_factory.mktemp("home")),
        "CLAUDE_CONFIG_DIR": str(claude_dir),
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
def archive(tmp_path_factory, claude_dir):
    workspace = write_files(tmp_path_factory.mktemp("ccusage") / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[("claude-code", claude_dir / "projects")])
    with Archive.for_workspace(workspace) as opened:
        yield opened


def ours_by_day_and_model(archive) -> dict[tuple[str, str], dict]:
    found = {}
    for day in archive.run("usage", {"group_by": "day"}):
        for model in archive.run("usage", {"group_by": "model", "start_date": day["key"], "end_date": day["key"]}):
            found[day["key"], model["key"]] = model
    return found


def theirs_by_day_and_model(daily) -> dict[tuple[str, str], dict]:
    return {(day["period"], model["modelName"]): model for day in daily for model in day["modelBreakdowns"]}


def test_every_count_is_ccusages_day_by_day_and_model_by_model(archive, ccusage_daily):
    ours, theirs = ours_by_day_and_model(archive), theirs_by_day_and_model(ccusage_daily)
    assert set(ours) == set(theirs) and len(theirs) == 3
    for key, model in theirs.items():
        assert ours[key]["input_tokens"] == model["inputTokens"], key
        assert ours[key]["output_tokens"] == model["outputTokens"], key
        assert ours[key]["cache_write_tokens"] == model["cacheCreationTokens"], key
        assert ours[key]["cache_read_tokens"] == model["cacheReadTokens"], key


def test_a_messages_output_is_its_last_lines(archive, ccusage_daily):
    (hour,) = [row for (day, _), row in ours_by_day_and_model(archive).items() if day == ONE_HOUR_DAY]
    assert hour["output_tokens"] == 40 + 95 and hour["responses"] == 2


def test_the_cost_is_ccusages_to_a_hundredth_of_a_cent_one_hour_cache_writes_included(archive, ccusage_daily):
    ours, theirs = ours_by_day_and_model(archive), theirs_by_day_and_model(ccusage_daily)
    for key, model in theirs.items():
        assert ours[key]["cost"] == pytest.approx(model["cost"], abs=0.0001), key
    hour = next(model for (day, _), model in theirs.items() if day == ONE_HOUR_DAY)
    per_token = {"inputTokens": 5e-6, "outputTokens": 25e-6, "cacheCreationTokens": 6.25e-6, "cacheReadTokens": 0.5e-6}
    at_five_minutes = sum(hour[count] * rate for count, rate in per_token.items())  # Opus 4.5's prices
    assert hour["cost"] == pytest.approx(at_five_minutes + 2 * 3000 * (10e-6 - 6.25e-6))
