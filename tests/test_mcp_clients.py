"""The official MCP clients against the server: the inspector CLI over stdio, the
conformance suite over streamable HTTP. `make test` installs both (mcp-clients/)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from test_mcp import TOOLS, launch

ARCHIVIST = str(Path(sys.executable).parent / "archivist")
BIN = ROOT / "mcp-clients" / "node_modules" / ".bin"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def inspector(workspace: Path, *arguments: str) -> subprocess.CompletedProcess:
    assert (BIN / "mcp-inspector").exists(), "run `make test` (it installs the MCP clients into mcp-clients/)"
    return subprocess.run(
        [str(BIN / "mcp-inspector"), "--cli", ARCHIVIST, "mcp", str(workspace), *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
    )


def call(workspace: Path, tool: str, **arguments: object) -> dict:
    args = []
    for key, value in arguments.items():
        args += ["--tool-arg", f"{key}={value if isinstance(value, str) else json.dumps(value)}"]
    done = inspector(workspace, "--method", "tools/call", "--tool-name", tool, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_inspector_lists_every_tool(embedded_sample):
    done = inspector(embedded_sample, "--method", "tools/list")
    assert done.returncode == 0, done.stderr
    tools = {tool["name"]: tool for tool in json.loads(done.stdout)["tools"]}
    assert set(tools) == TOOLS
    assert "Month format matches all days within that month" in json.dumps(tools["search_workspace"]["inputSchema"])


CALLS = {
    "search_workspace": (
        {"query": "authentication", "date_range": "2025-11"},
        {"query": "auth", "date_range": "2025-11-1"},
        "INVALID_DATE_RANGE",
    ),
    "search_reports": ({"query": "proxy timeout"}, {"query": "proxy", "max_results": 500}, "INVALID_PARAMETER"),
    "list_command_reports": ({"command": "k8s-cluster-health"}, {"command": "../reports"}, "INVALID_COMMAND_FILTER"),
    "get_report": (
        {"path": "reports/k8s-cluster-health/baseline-notes.md"},
        {"path": "reports/nope.md"},
        "PATH_NOT_FOUND",
    ),
    "get_document": ({"document": "notes/team-handbook.md"}, {"document": "../outside.md"}, "DOCUMENT_NOT_FOUND"),
    "search_commands": ({"query": "proxy"}, {"query": "p"}, "INVALID_QUERY"),
    "search": (
        {"query": "borders", "entities": ["feature", "bug"]},
        {"query": "borders", "start_date": "someday"},
        "INVALID_DATE",
    ),
    "search_semantic": (
        {"query": "authentication patterns"},
        {"query": "auth", "date_range": "nov"},
        "INVALID_DATE_RANGE",
    ),
    "get_similar": (
        {"document": "conversations/2025-11-10/002-debug-auth"},
        {"document": "no/such.md"},
        "DOCUMENT_NOT_FOUND",
    ),
    "list_conversations": ({"limit": 5}, {"start_date": "someday"}, "INVALID_DATE"),
    "get_conversation": (
        {"document": "conversations/2025-11-10/002-debug-auth", "limit": 10},
        {"document": "reports/k8s-cluster-health/baseline-notes.md"},
        "DOCUMENT_NOT_FOUND",
    ),
    "usage": ({"group_by": "month"}, {"group_by": "month", "end_date": "someday"}, "INVALID_DATE"),
    "file_history": ({"path": "app.py"}, {"path": "x" * 5000}, "INVALID_PARAMETER"),
    "activity": ({"start_date": "2025-01-01"}, {"end_date": "someday"}, "INVALID_DATE"),
    "embed_document": ({"path": "notes"}, {"path": "/etc"}, "PATH_NOT_FOUND"),
    "embed_workspace": ({}, {"workspace_path": "/no/such/workspace"}, "DIRECTORY_NOT_FOUND"),
    "get_embedding_status": ({}, {"workspace_path": "/no/such/workspace"}, "DIRECTORY_NOT_FOUND"),
}


def test_every_tool_is_called():
    assert set(CALLS) == TOOLS


@pytest.mark.parametrize("tool", sorted(CALLS))
def test_inspector_calls_each_tool_with_valid_and_invalid_arguments(embedded_sample, tool):
    good, bad, code = CALLS[tool]
    answer = call(embedded_sample, tool, **good)
    assert not answer.get("isError"), answer
    assert answer["structuredContent"] and answer["structuredContent"].get("success", True) is True
    failed = call(embedded_sample, tool, **bad)
    assert failed["isError"] is True
    assert failed["structuredContent"]["code"] == code
    assert failed["structuredContent"]["success"] is False
    assert failed["content"][0]["text"].startswith("❌")


def test_conformance_suite_over_http(embedded_sample, tmp_path):
    assert (BIN / "conformance").exists(), "run `make test` (it installs the MCP clients into mcp-clients/)"
    server = launch(["mcp", str(embedded_sample), "--http", "--conformance-fixtures"], tmp_path / "server.log")
    try:
        done = subprocess.run(
            [
                str(BIN / "conformance"),
                "server",
                "--url",
                # the suite's client takes a URL and no headers: the token the server printed goes in the URL
                f"{server.base}/mcp?token={server.token}",
                "--expected-failures",
                str(ROOT / "tests" / "mcp-conformance-expected-failures.yml"),
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        server.stop()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "Baseline check passed" in done.stdout
    for scenario in (
        "server-initialize",
        "tools-list",
        "tools-call-error",
        "dns-rebinding-protection",
        "tools-call-with-progress",
    ):
        assert f"✓ {scenario}:" in done.stdout, scenario
