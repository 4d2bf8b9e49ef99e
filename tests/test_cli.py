import json
import shutil

from click.testing import CliRunner
from conftest import SAMPLE

from archivist.cli import cli


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_index_prints_a_one_line_summary_and_is_incremental(tmp_path):
    workspace = tmp_path / "ws"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))  # as after `make serve`
    first = invoke("index", workspace)
    assert first.exit_code == 0
    assert f"{workspace}: 28 indexed, 0 unchanged, 0 removed, 2 skipped, 0 degraded (55 documents" in first.stdout
    second = invoke("index", workspace)
    assert "0 indexed, 28 unchanged, 0 removed" in second.stdout


def test_index_can_write_the_archive_elsewhere_and_list_problems(tmp_path):
    workspace = tmp_path / "ws"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes/empty.md").write_text("", encoding="utf-8")
    result = invoke("index", workspace, "--db", tmp_path / "elsewhere.db", "--show-problems")
    assert result.exit_code == 0
    assert "skipped: notes/empty.md: empty file" in result.stdout
    assert (tmp_path / "elsewhere.db").exists() and not (workspace / ".archivist").exists()


def test_index_of_a_missing_workspace_fails_with_the_code(tmp_path):
    result = invoke("index", tmp_path / "missing")
    assert result.exit_code == 1
    assert "[DIRECTORY_NOT_FOUND]" in result.stderr


def test_search_prints_results_and_json(sample_workspace):
    human = invoke("search", sample_workspace, "authentication", "--date-range", "2025-11-10")
    assert human.exit_code == 0
    assert "Debugging intermittent JWT authentication failures" in human.stdout
    as_json = invoke("search", sample_workspace, "authentication", "--date-range", "2025-11-10", "--json")
    rows = json.loads(as_json.stdout)["results"]
    assert {r["path"] for r in rows} == {
        "conversations/2025-11-10/001-brainstorm-feature",
        "conversations/2025-11-10/002-debug-auth",
    }


def test_search_reports_from_the_cli(sample_workspace):
    result = invoke(
        "search", sample_workspace, "decode response", "--reports", "--command", "analyze_zoom_speech_sdk_log", "--json"
    )
    rows = json.loads(result.stdout)["results"]
    assert [r["report_name"] for r in rows] == [
        "Zoom_Speech_SDK_日志分析报告_20251120_decode_response_v6.md",
        "Zoom_Speech_SDK_日志分析报告_20251105_v2.md",
    ]


def test_search_errors_go_to_stderr_with_a_non_zero_exit(sample_workspace):
    result = invoke("search", sample_workspace, "auth", "--date-range", "2025-11-1")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "Invalid date_range '2025-11-1'" in result.stderr and "[INVALID_DATE_RANGE]" in result.stderr
    unindexed = invoke("search", sample_workspace / "nowhere", "auth")
    assert unindexed.exit_code == 1 and "archivist index" in unindexed.stderr


def test_status_counts_documents_by_kind(sample_workspace):
    result = invoke("status", sample_workspace, "--json")
    status = json.loads(result.stdout)
    assert status["documents"] == {"conversation": 13, "memory": 13, "note": 5, "record": 18, "report": 6}
