"""Fuzz every MCP tool and the HTTP surfaces for long: outcomes per tool, and a failing exit on a broken contract.

    python bench/fuzz.py [--examples 10000] [--http-examples 2000] [--stdio-examples 500] [--export-examples 500]
                         [--log-examples 100] [--logs-only] [--kinds KIND,...] [--seed 0] [--timeout 10]

The long run of tests/test_fuzz.py, with the same strategies and checks (tests/fuzzing.py):
through the MCP SDK's in-process client, each tool's catalogue (every nasty value of
fuzzing.NASTY in every parameter) and --examples generated calls per tool; through the
Datasette app, the HTTP catalogue and --http-examples GETs of /api/search, the canned
queries' JSON and the pages; through a real `archivist mcp` subprocess, the core catalogue
and --stdio-examples calls (spread over the tools); through both export readers, the
--export-examples generated zips of fuzz_exports; through the indexer (reading, masking,
storing), --log-examples damaged sources of every kind of agent log registered (fuzz_logs: each
kind's sample damaged in one file, every damage of the kind in turn; --logs-only runs those alone).
Works on a disposable copy of the sample workspace (indexed and embedded once under
bench/out/fuzz-sample); the embedding tools only get paths and workspaces that must fail.

Prints, per tool, the count of each outcome (ok, each error code) and of each broken
property (INTERNAL_ERROR, raw SQL / traceback leak, hang past --timeout, exception,
error without the error body (docs/errors.md), bad success shape, foreign workspace answered, wrote
outside the workspace), the HTTP status counts per surface; per kind of agent log, the cases
run, the sessions stored, the problems told, the internal errors (an exception, a hang, a text
stored that is not UTF-8) and the sessions lost (both must be 0); and one example of each
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
    EXCEPTION,
    HANG,
    LOST,
    NASTY,
    NOT_UTF8_STORED,
    TOOLS,
    Caller,
    LogDamage,
    Place,
    Violation,
    catalogue,
    http_catalogue,
    http_requests,
    index_log_damage,
    log_damage,
    log_kinds,
    log_sample,
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


LOG_COUNTS = ("cases", "sessions stored", "problems told", "internal errors", "sessions lost")


def fuzz_logs(examples: int, run_seed: int, timeout: float, tally: Tally, kinds: tuple[str, ...]) -> dict[str, Counter]:
    """Damaged agent logs of every kind registered (tests/fuzzing.py: ``log_damage``; each of the kind's
    damages in turn, ``examples`` in all: a file renamed with bytes that are not UTF-8, cut, a line cut
    short, bytes that are not UTF-8, NUL and control bytes, brackets, lines reordered, a value of another type, huge, nested deeply or hostile text with
    lone surrogates escaped; a store's cell changed, a row deleted, the file truncated, a page of garbage)
    indexed as a source, masking and storing included: nothing raises, nothing hangs, no text stored is
    anything but UTF-8, and every session the damaged file does not hold is stored. The counts, per kind."""
    counts: dict[str, Counter] = {}
    for kind in kinds:
        count = counts.setdefault(kind, Counter({name: 0 for name in LOG_COUNTS}))
        damages = log_sample(kind).damages()
        started = time.perf_counter()

        def body(damage: LogDamage, count: Counter = count) -> None:
            with tempfile.TemporaryDirectory(prefix="archivist-fuzz-logs-") as scratch:
                outcome = index_log_damage(damage, Path(scratch), timeout)
            broken = [violation.property for violation in outcome.violations]
            count.update(
                {
                    "cases": 1,
                    "sessions stored": outcome.stored,
                    "problems told": outcome.problems,
                    "internal errors": sum(name in (EXCEPTION, HANG, NOT_UTF8_STORED) for name in broken),
                    "sessions lost": broken.count(LOST),
                }
            )
            tally.add(f"log {damage.kind}", outcome.label, outcome.violations, damage)

        for number, how in enumerate(damages):
            share = examples // len(damages) + (number < examples % len(damages))
            sampled(share, log_damage(kind, how), body, run_seed + number)
        print(f"  {kind}: {count['cases']} cases in {time.perf_counter() - started:.1f}s", flush=True)
    return counts


def print_log_counts(counts: dict[str, Counter]) -> None:
    print("Agent logs, per kind (internal errors and sessions lost must be 0):")
    print(f"  {'kind':<16}" + "".join(f"{name:>17}" for name in LOG_COUNTS))
    for kind, count in counts.items():
        print(f"  {kind:<16}" + "".join(f"{count[name]:>17}" for name in LOG_COUNTS))
    total = sum(counts.values(), Counter())
    print(f"  {'all':<16}" + "".join(f"{total[name]:>17}" for name in LOG_COUNTS))


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
        "--log-examples",
        type=int,
        default=100,
        help="damaged agent logs of each kind indexed as sources (masking and storing)",
    )
    parser.add_argument(
        "--logs-only", action="store_true", help="the agent logs alone: no MCP, HTTP or export fuzzing (no model)"
    )
    parser.add_argument("--kinds", default="", help="the agent-log kinds fuzzed, comma-separated (all registered)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--timeout", type=float, default=10.0, help="seconds: a call without an answer by then is a hang"
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    OUT.mkdir(exist_ok=True)

    tally = Tally()
    log_counts: dict[str, Counter] = {}
    if args.log_examples:
        kinds = tuple(kind for kind in args.kinds.split(",") if kind) or log_kinds()
        print(f"agent logs: {args.log_examples} damaged sources of each kind indexed ({len(kinds)} kinds)")
        log_counts = fuzz_logs(args.log_examples, args.seed, args.timeout, tally, kinds)
    if args.logs_only:
        print()
        print_log_counts(log_counts)
        report(tally, server=False)
        return
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
    if log_counts:
        print_log_counts(log_counts)
    report(tally)


def report(tally: Tally, server: bool = True) -> None:
    """The outcomes, one example of each broken property, and the exit status: 1 where any property broke."""
    tally.print("Outcomes (ok, error codes, HTTP statuses, agent logs stored) and broken properties:")
    if tally.examples:
        print("One example of each broken property:")
        for (group, name), (given, detail) in sorted(tally.examples.items()):
            print(f"  [{group}] {name}: {given[:300]}\n      -> {' '.join(detail.split())[:300]}")
    log = f" (server log: {OUT / 'fuzz.log'})" if server else ""
    print(f"contract: {'BROKEN' if tally.failed() else 'kept'}{log}")
    sys.exit(1 if tally.failed() else 0)


if __name__ == "__main__":
    main()
