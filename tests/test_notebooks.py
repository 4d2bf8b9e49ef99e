"""Every notebook runs from top to bottom against the sample workspace."""

import base64
from pathlib import Path

import nbformat
import pytest
from conftest import ARTIFACTS, ROOT
from nbclient import NotebookClient

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

# what each notebook must print (and plot) against the sample workspace
EXPECTED = {
    "explore-archive.ipynb": {
        "text": [
            "INVALID_DATE_RANGE",
            "Debugging intermittent JWT authentication failures",
            "Borders & Corners on Media & Frames",  # the unified search
            "by month: {",
        ],
        "plots": 0,
    },
    "activity-and-similarity.ipynb": {
        "text": [
            "55 documents embedded",
            "2025-11 29",  # dated documents of November 2025, every kind
            "most similar conversations:",
            "Kubernetes migration plan for the legacy VM services",
        ],
        "plots": 2,  # activity per month, conversation similarity
    },
    "usage.ipynb": {
        "text": [
            "sources of agent logs indexed",
            "at genai-prices ",
            "sessions of agent logs",
            "src/proxy/resolver.py: 2 sessions, 4 calls",
        ],
        "plots": 2,  # tokens and cost per day by model, sessions by hour and weekday
    },
}


def test_every_notebook_is_checked():
    assert {path.name for path in NOTEBOOKS} == set(EXPECTED)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_without_errors(path: Path, monkeypatch):
    monkeypatch.delenv("ARCHIVIST_WORKSPACE", raising=False)
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}
    ).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    text = "".join(output.get("text", "") for output in outputs)
    for expected in EXPECTED[path.name]["text"]:
        assert expected in text
    plots = [output["data"]["image/png"] for output in outputs if "image/png" in output.get("data", {})]
    assert len(plots) == EXPECTED[path.name]["plots"]
    for number, plot in enumerate(plots, 1):  # kept for a look after the run
        target = ARTIFACTS / "notebooks" / f"{path.stem}-{number}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(base64.b64decode(plot))
        assert target.read_bytes().startswith(b"\x89PNG")
