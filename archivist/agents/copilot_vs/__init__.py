"""GitHub Copilot in Visual Studio: its conversations, read from the OpenTelemetry traces it writes
(docs/contract.md: sources).

Visual Studio (on Windows) writes Copilot's traces to ``%LOCALAPPDATA%\\Temp\\VSGitHubCopilotLogs\\traces``
(``%TEMP%``), in files named ``<time>_<id>_VSGitHubCopilot_traces.jsonl``: a line is one export of
spans, and a file can hold several conversations, as one conversation can be spread over several
files. Each conversation (``gen_ai.conversation.id``) is one session, gathered from every trace file
of the folder: its user messages, the model's answers with their tool calls, model and tokens, and
each tool's result (``spans``). The traces name no working folder: a session has no project. The
shape is the one kenn-io/agentsview reads (``internal/parser/visualstudio_copilot.go``, its notes
``docs/internal/visual-studio-copilot-traces.md`` and its redacted traces
``testdata/visualstudio-copilot/redacted``), of Visual Studio 18.6 (2026) and Copilot's agent mode.

The source is the traces folder or one trace file: a file is read for the conversations it
holds, each gathered from the trace files beside it too. A session's key is its conversation id.
A line that is not JSON, or no export of spans, is skipped and told in the problems of the
sessions of its file; a line over 64 MB too. Visual Studio 2026's own conversation files
(``.vs/<solution>/copilot-chat/<id>/sessions/<id>``) are not read. Nothing is ever written.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from archivist import agents
from archivist.agents.copilot_vs import spans

KIND = "copilot-vs"
SUFFIX = "_VSGitHubCopilot_traces.jsonl"

_EXPECTED = (
    "expected Visual Studio Copilot's traces folder (%LOCALAPPDATA%\\Temp\\VSGitHubCopilotLogs\\traces, "
    "with *_VSGitHubCopilot_traces.jsonl files) or one trace file"
)
_NOT_SPANS = "no OpenTelemetry export of spans"


def check(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not Visual Studio Copilot's traces folder or one trace file, or None when it is."""
    return agents.check_path(path, _EXPECTED, "a Visual Studio Copilot trace file", looks_like_trace, _traces, _none)


def _none(root: Path) -> str:
    if root.name == "traces" or root.name == "VSGitHubCopilotLogs":
        return "holds no Visual Studio Copilot trace file yet"
    return "holds no *_VSGitHubCopilot_traces.jsonl file"


def looks_like_trace(file: Path) -> bool:
    """A peek: a file whose first line is an export of spans (or a trace file not yet written)."""
    return agents.first_value_is(file, lambda value: spans.spans_of(value) is not None)


def _traces(root: agents.Root) -> list[Path]:
    """The trace files of the source's folder (or of its ``traces`` folder), in name order: by time."""
    folder = root.path
    for inner in (folder / "traces", folder / "VSGitHubCopilotLogs" / "traces"):
        if agents.is_dir(inner) and root.allows(inner):
            folder = inner
            break
    return root.files(folder, SUFFIX)


def read(path: str | os.PathLike[str], problems: list[str] | None = None) -> Iterator[agents.Session]:
    """Every conversation of the source, one session each, in the order their trace files first hold them."""
    root = Path(path).expanduser()
    confined = agents.Root(root, problems)
    if agents.is_file(root):
        files = [root, *(file for file in confined.files(root.parent, SUFFIX) if file != root)]
        named = {root}
    elif agents.is_dir(root):
        files = _traces(confined)
        named = set(files)
    else:
        return
    reading = _Reading()
    for file in sorted(named, key=lambda file: file.name):  # the conversations the source names
        reading.file(file, None)
    for file in files:  # and their spans in the trace files beside it
        if file not in named:
            reading.file(file, set(reading.gathered))
    for conversation, records in reading.gathered.items():
        own = sorted(reading.held[conversation], key=lambda file: file.name)
        found = [problem for file in own for problem in reading.told[file]]
        session = spans.session(conversation, records, own, found)
        if session is not None:
            yield session
        elif problems is not None:
            problems.append(f"conversation {conversation}: no message (only agent spans)")
    if problems is not None:
        for file in sorted(files, key=lambda file: file.name):
            if reading.told.get(file) and not any(file in held for held in reading.held.values()):
                problems.extend(f"{file.name}: {problem}" for problem in reading.told[file])


class _Reading:
    """The spans of a source's trace files, by conversation, and what was skipped in each file."""

    def __init__(self) -> None:
        self.gathered: dict[str, list[spans.Span]] = {}
        self.held: dict[str, list[Path]] = {}
        self.told: dict[Path, list[str]] = {}
        self.order = 0

    def file(self, file: Path, only: set[str] | None) -> None:
        """Read one trace file's spans into their conversations (``only`` those, where given)."""
        counting = agents.Skipping()
        try:
            with file.open("rb") as handle:
                for line in agents.json_lines(handle, counting.skipped):
                    found = spans.spans_of(line)
                    if found is None:
                        counting.skip(_NOT_SPANS)
                        continue
                    for span in found:
                        self.order += 1
                        made = spans.record(span, self.order)
                        if made is not None and (only is None or made.conversation in only):
                            self._add(made, file)
        except OSError as error:
            self.told[file] = [agents.Unread(f"not read ({error.strerror or error})")]
            return
        self.told[file] = agents.skipped_problems(counting.skipped)

    def _add(self, made: spans.Span, file: Path) -> None:
        self.gathered.setdefault(made.conversation, []).append(made)
        files = self.held.setdefault(made.conversation, [])
        if file not in files:
            files.append(file)
