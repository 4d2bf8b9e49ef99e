"""What starting the command line imports: ``import archivist.cli`` loads click and the group alone,
a command's module is imported when the command is asked for, and ``archivist mcp`` and
``archivist search`` load none of what only other commands use (the servers, the indexer, the
model, the registry of kinds). Each is checked in a fresh interpreter, whose ``sys.modules`` it reads."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest
from conftest import ARCHIVIST

from archivist.cli import COMMANDS, cli

# Packages that no start of the command line needs: the web and MCP servers, the archive's writer,
# the model and its arrays, prices, and the scan of installed distributions.
HEAVY = (
    "datasette",
    "uvicorn",
    "sqlite_utils",
    "mcp",
    "mcp_types",
    "pydantic",
    "numpy",
    "onnxruntime",
    "tokenizers",
    "genai_prices",
    "importlib.metadata",
)
# Archivist's own layers that only a command's work needs.
LAYERS = ("archivist.agents", "archivist.archive", "archivist.queries", "archivist.semantic", "archivist.web")
COMMAND_MODULES = tuple(f"archivist.cli.{module}" for module in sorted(set(COMMANDS.values())))


def imported_by(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    shown = "import json, sys; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\n{shown}"], capture_output=True, text=True, check=True, timeout=60
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def loaded(modules: set[str], names: tuple[str, ...]) -> set[str]:
    """Those of ``names`` that ``modules`` holds, themselves or a module of theirs."""
    return {name for name in names if any(module == name or module.startswith(name + ".") for module in modules)}


def test_the_heavy_packages_are_installed_so_that_their_absence_is_a_fact() -> None:
    assert all(importlib.util.find_spec(name) is not None for name in HEAVY)


def test_importing_the_command_line_loads_click_and_the_group_alone() -> None:
    modules = imported_by("import archivist.cli")
    assert "click" in modules and "archivist.cli.output" in modules
    assert loaded(modules, HEAVY) == set()
    assert loaded(modules, LAYERS) == set()
    assert loaded(modules, COMMAND_MODULES) == set()


def test_a_command_is_imported_when_asked_for_and_the_others_are_not() -> None:
    modules = imported_by("from archivist.cli import cli; cli.commands['usage']")
    assert loaded(modules, COMMAND_MODULES) >= {"archivist.cli.usage"}
    assert not loaded(modules, COMMAND_MODULES) & {"archivist.cli.serving", "archivist.cli.mcp_server"}
    assert "archivist.queries.declarations" in modules  # (the usage query's options are declared)


def test_archivist_mcp_over_stdio_starts_without_the_other_commands_nor_the_kinds() -> None:
    modules = imported_by(
        "from archivist.cli import cli\nimport archivist.mcp.stdio\ncli.commands['mcp'].make_context('mcp', ['.'])"
    )
    assert "archivist.cli.mcp_server" in modules and "archivist.mcp.stdio" in modules
    assert loaded(modules, COMMAND_MODULES) == {"archivist.cli.mcp_server"}
    assert loaded(modules, HEAVY) == set()
    assert "archivist.agents.registry" not in modules and "pluggy" not in modules


def test_archivist_search_makes_its_options_without_a_server_nor_the_model() -> None:
    modules = imported_by("from archivist.cli import cli\ncli.commands['search'].make_context('search', ['.', 'q'])")
    assert "archivist.queries.declarations" in modules
    assert not loaded(modules, COMMAND_MODULES) & {"archivist.cli.serving", "archivist.cli.mcp_server"}
    assert loaded(modules, HEAVY) == set()
    assert loaded(modules, ("archivist.web", "archivist.semantic", "archivist.archive.indexer")) == set()
    assert "archivist.agents.registry" in modules and "archivist.agents.reader" not in modules  # (no reader)


def test_every_command_is_its_modules_and_the_group_lists_each_once() -> None:
    assert list(cli.commands) == list(COMMANDS)
    for name in COMMANDS:
        assert cli.commands[name].name == name
    helped = subprocess.run([ARCHIVIST, "--help"], capture_output=True, text=True, check=True).stdout
    assert all(f"  {name} " in helped for name in COMMANDS)


@pytest.mark.parametrize("command", ["index", "serve"])
def test_the_source_option_names_every_kind_registered_when_its_help_is_shown(command: str) -> None:
    from archivist.agents import registry

    helped = subprocess.run([ARCHIVIST, command, "--help"], capture_output=True, text=True, check=True).stdout
    assert "Kinds:" + ",".join(registry.names()) + "." in "".join(helped.split())  # (as wrapped)


def test_an_unknown_command_is_refused_with_the_names_of_the_known() -> None:
    done = subprocess.run([ARCHIVIST, "serch"], capture_output=True, text=True)
    assert done.returncode == 2 and "No such command 'serch'" in done.stderr and "'search'" in done.stderr


def test_a_workspace_named_is_taken_without_asking_for_the_platforms_data_folder(tmp_path) -> None:
    modules = imported_by(
        f"from pathlib import Path\nfrom archivist.cli.workspaces import workspace_folder\n"
        f"workspace_folder(Path({str(tmp_path)!r}), 'mcp')"
    )
    assert "archivist.cli.workspaces" in modules and "platformdirs" not in modules
    unnamed = imported_by(
        "from archivist.cli.workspaces import workspace_folder\ntry:\n    workspace_folder(None, 'search')\n"
        "except SystemExit:\n    pass"
    )
    assert "platformdirs" in unnamed
