"""Every notebook runs from top to bottom against the sample workspace."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_is_a_notebook():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_without_errors(path: Path, tmp_path, monkeypatch):
    monkeypatch.delenv("ARCHIVIST_WORKSPACE", raising=False)
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    outputs = "".join(
        output.get("text", "") for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
    )
    assert "INVALID_DATE_RANGE" in outputs
    assert "Debugging intermittent JWT authentication failures" in outputs
    assert "Borders & Corners on Media & Frames" in outputs  # the unified search
    assert "by month: {" in outputs
