"""Fuzz every MCP tool and the HTTP surfaces for long: outcomes per tool, and a failing exit on a broken contract.

    python bench/fuzz.py [--examples 10000] [--http-examples 2000] [--stdio-examples 500] [--export-examples 500]
                         [--log-examples 500] [--seed 0] [--timeout 10]

The long run of tests/test_fuzz.py, with the same strategies and checks (tests/fuzzing.py):
through the MCP SDK's in-process client, each tool's catalogue (every nasty value of
fuzzing.NASTY in every parameter) and --examples generated calls per tool; through the
Datasette app, the HTTP catalogue and --http-examples GETs of /api/search, the canned
queries' JSON and the pages; through a real `archivist mcp` subprocess, the core catalogue
and --stdio-examples calls (spread over the tools); through both export readers, the
--export-examples generated zips of fuzz_exports; through the indexer (reading, masking,
storing), the --log-examples damaged agent logs of fuzz_logs.
Works on a disposable copy of the sample workspace (indexed and embedded once under
bench/out/fuzz-sample); the embedding tools only get paths and workspaces that must fail.

Prints, per tool, the count of each outcome (ok, each error code) and of each broken
property (INTERNAL_ERROR, raw SQL / traceback leak, hang past --timeout, exception,
error without the error body (docs/errors.md), bad success shape, foreign workspace answered, wrote
outside the workspace), the HTTP status counts per surface, and one example of each
broken property. Exits 1 if any property broke (HTTP: any 5xx). Server logs go to
bench/out/fuzz.log.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import warnings
import zipfile
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fuzzing import (  # noqa: E402
    CORE,
    NASTY,
    TOOLS,
    Caller,
    Place,
    Violation,
    catalogue,
    http_catalogue,
    http_requests,
    prepare_place,
    tool_arguments,
)
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from archivist.workspace import archive_path  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
SAMPLE = ROOT / "sample-workspace"
ARCHIVIST = str(Path(sys.executable).parent / "archivist")


class Tally:
    """Outcome and broken-property counts per group (a tool, or an HTTP surface), and one example of each."""

    def __init__(self) -> None:
        self.outcomes: dict[str, Counter[str]] = defaultdict(Counter)
        self.broken: dict[str, Counter[str]] = defaultdict(Counter)
        self.examples: dict[tuple[str, str], tuple[str, str]] = {}

    def add(self, group: str, label: str, violations: list[Violation], given: Any) -> None:
        self.outcomes[group][label] += 1
        for violation in violations:
            self.broken[group][violation.property] += 1
            shown = f"{given!r}"
            kept = self.examples.get((group, violation.property))
            if kept is None or len(shown) < len(kept[0]):  # the shortest example of each
                self.examples[(group, violation.property)] = (shown, violation.detail)

    def failed(self) -> bool:
        return any(self.broken.values())

    def print(self, title: str) -> None:
        print(title)
        for group in self.outcomes:
            total = sum(self.outcomes[group].values())
            counts = ", ".join(f"{label} {n}" for label, n in self.outcomes[group].most_common())
            print(f"  {group:<24} {total:6d} calls: {counts}")
            if self.broken[group]:
                print(f"  {'':<24} BROKEN: " + ", ".join(f"{name} {n}" for name, n in self.broken[group].most_common()))


def sampled(examples: int, strategy: st.SearchStrategy[Any], body: Callable[[Any], None], run_seed: int) -> None:
    """Run ``body`` on ``examples`` values of ``strategy``: generation only, no shrinking, nothing stored."""
    if examples <= 0:  # a run of one surface alone: --examples 0, say
        return

    @seed(run_seed)
    @settings(
        max_examples=examples,
        phases=[Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(value=strategy)
    def run(value: Any) -> None:
        body(value)

    run()


def embedded_sample() -> Path:
    """bench/out/fuzz-sample: the sample workspace, indexed and embedded once."""
    from archivist.semantic.embeddings import embed_workspace

    workspace = OUT / "fuzz-sample"
    if not archive_path(workspace).exists():
        shutil.rmtree(workspace, ignore_errors=True)
        shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
        started = time.perf_counter()
        embed_workspace(workspace)
        print(f"indexed and embedded {workspace} in {time.perf_counter() - started:.1f}s")
    return workspace


def fuzz_tools(
    caller: Caller, place: Place, examples: int, run_seed: int, tally: Tally, tag: str, values: tuple[Any, ...]
) -> None:
    """Per tool: the catalogue of ``values`` in each parameter, then ``examples`` generated calls."""
    for tool in TOOLS:
        started = time.perf_counter()

        def body(arguments: dict[str, Any], tool: str = tool) -> None:
            label, violations = caller.call_tool(tool, arguments, place)
            tally.add(f"{tool}{tag}", label, violations, arguments)

        for arguments in catalogue(tool, place, values):
            body(arguments)
        sampled(examples, tool_arguments(tool, place), body, run_seed)
        seconds = time.perf_counter() - started
        calls = sum(tally.outcomes[f"{tool}{tag}"].values())
        print(f"  {tool}{tag}: {calls} calls in {seconds:.1f}s ({calls / max(seconds, 1e-9):.0f}/s)", flush=True)


def surface(path: str) -> str:
    if path.startswith("/document/"):
        return "/document/<id>/source" if path.endswith("/source") else "/document/<id>"
    return path


def fuzz_http(place: Place, examples: int, run_seed: int, timeout: float, tally: Tally) -> None:
    from archivist.web.app import make_datasette, start

    with Caller(timeout=120) as caller:
        datasette = caller.run(start, make_datasette(archive_path(place.workspace)))
        caller.run(datasette.client.get, "/archive/search_semantic.json", params={"query": "warm the model"})
        caller.timeout = timeout
        started = time.perf_counter()

        def body(request: tuple[str, list[tuple[str, str]]]) -> None:
            path, params = request
            label, violations = caller.get(datasette, path, params)
            tally.add(surface(path), label, violations, request)

        requests = http_catalogue(place)
        for request in requests:
            body(request)
        sampled(examples, http_requests(place), body, run_seed)
        print(f"  {len(requests)} + {examples} requests in {time.perf_counter() - started:.1f}s", flush=True)


# Member names of a hostile export zip: safe ones and every kind the readers refuse.
EXPORT_NAMES = ["conversations.json", "conversations-1.json", "data/conversations.json", "/conversations.json"]
EXPORT_NAMES += ["../conversations.json", "a\\conversations.json", "./conversations.json", "C:conversations.json"]


def fuzz_exports(examples: int, run_seed: int, timeout: float, tally: Tally) -> None:
    """Generated export zips (names safe and not, JSON nested, cut and escaped anywhere, each member stored,
    deflated or bzip2) through both export readers' check() and read(): nothing raises, nothing hangs."""
    from archivist.agents import Unavailable, chatgpt_export, claude_export

    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=30),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    )
    # A conversation of either kind first (so that check() lets read() go on), then anything, cut anywhere.
    claude = '[{"uuid": "c", "chat_messages": [{"sender": "human", "text": "hi"}]}, '
    chatgpt = '[{"id": "g", "mapping": {"n": {"message": {"author": {"role": "user"}}}}}, '
    first = st.sampled_from([claude, chatgpt, ""])
    nested = st.builds(
        lambda start, value, deep: start + "[" * deep + json.dumps(value), first, json_values, st.integers(0, 300)
    )
    text = st.builds(lambda value, cut: value[:cut], nested, st.integers(0, 2_000))
    compression = st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2])
    members = st.lists(st.tuples(st.sampled_from(EXPORT_NAMES), text, compression), min_size=1, max_size=4)

    with tempfile.TemporaryDirectory(prefix="archivist-fuzz-exports-") as scratch:
        export = Path(scratch) / "export.zip"

        def body(given: list[tuple[str, str, int]]) -> None:
            with warnings.catch_warnings(), zipfile.ZipFile(export, "w") as archive:
                warnings.simplefilter("ignore")  # a repeated name, on purpose
                for name, data, method in given:
                    archive.writestr(name, data, compress_type=method)
            for kind in (claude_export, chatgpt_export):
                started, violations, problems = time.perf_counter(), [], []
                try:
                    label = "ok" if kind.check(export) is None else "refused"
                    sum(1 for _ in kind.read(export, problems))
                except Unavailable:  # a limit on reading compressed input: told, what is stored kept
                    label = "limited"
                except Exception as error:  # the property under test: nothing escapes
                    label, violations = "exception", [Violation("exception", repr(error))]
                if time.perf_counter() - started > timeout:
                    violations.append(Violation("hang", f"{time.perf_counter() - started:.1f}s"))
                tally.add(f"export {kind.KIND}", label, violations, given)

        sampled(examples, members, body, run_seed)


def fuzz_logs(examples: int, run_seed: int, timeout: float, tally: Tally) -> None:
    """Damaged agent logs of every text kind (tests/test_agentlogs_mutations.py's damages: cut, deep
    nesting, huge strings, wrong types, invalid UTF-8, reordered lines) indexed as a source, masking
    and storing included: nothing raises, nothing hangs, and every session the undamaged lines
    before the damage make is stored."""
    from test_agentlogs_mutations import (
        AIDER,
        CLAUDE_CODE,
        CODEX,
        GEMINI_CLI,
        SAMPLES,
        SPECSTORY,
        copy_sample,
        first_difference,
        read_all,
        split_lines,
        text_damages,
    )

    from archivist.archive.indexer import index_workspace
    from archivist.secrets import Masker
    from archivist.workspace import secret_key

    kinds = (CLAUDE_CODE, CODEX, GEMINI_CLI, AIDER, SPECSTORY)

    @st.composite
    def damaged(draw: st.DrawFn) -> tuple[Any, str, bytes, str]:
        kind = draw(st.sampled_from(kinds))
        target = draw(st.sampled_from(kind.files()))
        damage = draw(text_damages(kind, (SAMPLES / kind.folder / target).read_bytes()))
        return kind, target, damage.data, damage.what

    def body(given: tuple[Any, str, bytes, str]) -> None:
        kind, target, data, what = given
        group = f"log {kind.module.KIND}"
        original = split_lines((SAMPLES / kind.folder / target).read_bytes())
        kept = b"".join(original[: first_difference(original, split_lines(data))])
        with tempfile.TemporaryDirectory(prefix="archivist-fuzz-logs-") as scratch:
            reference = copy_sample(kind.folder, Path(scratch) / "reference")
            (reference / target).write_bytes(kept)
            wanted = {session.key for session in read_all(kind.module, reference / kind.source)}
            logs = copy_sample(kind.folder, Path(scratch) / "damaged")
            (logs / target).write_bytes(data)
            workspace = Path(scratch) / "workspace"
            workspace.mkdir()
            started, violations, label = time.perf_counter(), [], "stored"
            try:
                summary = index_workspace(workspace, log_sources=[(kind.module.KIND, logs / kind.source)])
                label = "stored, problems listed" if summary.problems else "stored"
                stored = store_keys(workspace)
                masker = Masker(secret_key(archive_path(workspace)))  # the keys are stored masked
                lost = sorted(key for key in wanted if masker.name(key) not in stored)
                if lost:
                    violations.append(Violation("lost", f"sessions before the damage not stored: {lost}"))
            except Exception as error:  # the property under test: nothing escapes
                label, violations = "exception", [Violation("exception", repr(error))]
            if time.perf_counter() - started > timeout:
                violations.append(Violation("hang", f"{time.perf_counter() - started:.1f}s"))
            tally.add(group, label, violations, what)

    sampled(examples, damaged(), body, run_seed)


def store_keys(workspace: Path) -> set[str]:
    """The keys of the sessions an archive holds, without their source's prefix (``log:N:``)."""
    import sqlite_utils

    db = sqlite_utils.Database(archive_path(workspace))
    return {key.split(":", 2)[2] for (key,) in db.execute("SELECT key FROM documents WHERE source LIKE 'log:%'")}


def quiet_logs(path: Path) -> None:
    """Server logs (a failing tool logs its traceback) to a file: the findings are counted, not printed."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(logging.FileHandler(path, mode="w", encoding="utf-8"))
    root.setLevel(logging.INFO)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=10_000, help="calls per tool, in-process")
    parser.add_argument("--http-examples", type=int, default=2_000, help="GETs through the Datasette app")
    parser.add_argument(
        "--stdio-examples", type=int, default=500, help="calls through `archivist mcp` (spread over the tools)"
    )
    parser.add_argument("--export-examples", type=int, default=500, help="generated zips through the export readers")
    parser.add_argument(
        "--log-examples", type=int, default=500, help="damaged agent logs indexed as sources (masking and storing)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds: a call without an answer by then is a hang"
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    OUT.mkdir(exist_ok=True)

    tally = Tally()
    if args.log_examples:
        print(f"agent logs: {args.log_examples} damaged sessions indexed as sources (every text kind)")
        fuzz_logs(args.log_examples, args.seed, args.timeout, tally)
    if args.export_examples:
        print(f"exports: {args.export_examples} generated zips through claude-export and chatgpt-export")
        fuzz_exports(args.export_examples, args.seed, args.timeout, tally)
    source = embedded_sample()
    with tempfile.TemporaryDirectory(prefix="archivist-fuzz-") as scratch:
        workspace = Path(scratch) / "sample"
        shutil.copytree(source, workspace)
        place = prepare_place(workspace, Path(scratch))
        print(f"workspace {place.workspace} (allowed), {place.foreign} (indexed, not allowed), {place.bare} (empty)")

        from archivist.mcp.tools import create_server

        server = create_server(archive_path(place.workspace), place.workspace)
        quiet_logs(OUT / "fuzz.log")
        print(
            f"in-process MCP: a catalogue of nasty values, then {args.examples} examples per tool (seed {args.seed}, timeout {args.timeout:g}s)"
        )
        with Caller(server, timeout=120) as caller:
            caller.run(caller.client.call_tool, "search_semantic", {"query": "warm the model"})
            caller.timeout = args.timeout
            fuzz_tools(caller, place, args.examples, args.seed, tally, "", NASTY)

        if args.http_examples:
            print(f"HTTP (Datasette app, in-process): a catalogue of nasty values, then {args.http_examples} requests")
            fuzz_http(place, args.http_examples, args.seed, args.timeout, tally)

        per_tool = args.stdio_examples // len(TOOLS)
        if per_tool:
            print(f"stdio (`archivist mcp` subprocess): the core catalogue, then {per_tool} examples per tool")
            with open(OUT / "fuzz-stdio.log", "w", encoding="utf-8") as log:
                params = StdioServerParameters(
                    command=ARCHIVIST, args=["mcp", str(place.workspace)], env={**os.environ, "HF_HUB_OFFLINE": "1"}
                )
                with Caller(stdio_client(params, errlog=log), timeout=120) as caller:
                    caller.run(caller.client.call_tool, "search_semantic", {"query": "warm the model"})
                    caller.timeout = args.timeout
                    fuzz_tools(caller, place, per_tool, args.seed + 1, tally, " (stdio)", CORE)

    print()
    tally.print("Outcomes (ok, error codes, HTTP statuses) and broken properties:")
    if tally.examples:
        print("One example of each broken property:")
        for (group, name), (given, detail) in sorted(tally.examples.items()):
            print(f"  [{group}] {name}: {given[:300]}\n      -> {' '.join(detail.split())[:300]}")
    print(f"contract: {'BROKEN' if tally.failed() else 'kept'} (server log: {OUT / 'fuzz.log'})")
    sys.exit(1 if tally.failed() else 0)


if __name__ == "__main__":
    main()
