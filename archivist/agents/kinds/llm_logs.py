"""llm: the log database of the ``llm`` command-line tool (read by ``archivist.agents.llm_logs``)."""

from archivist.agents.hookspecs import Kind, Location, Register, hookimpl

FOLDER = "io.datasette.llm"  # llm's folder, where click puts an application's own on each system


@hookimpl
def register_agent_kinds(register: Register) -> None:
    """Register llm."""
    register(
        Kind(
            name="llm",
            reader="archivist.agents.llm_logs",
            description="the prompts and responses that `llm` logs",
            source="`llm`'s `logs.db`, or its folder, read-only",
            conversation="conversation or thread",
            locations=(
                Location(f"~/.config/{FOLDER}", "logs.db", env="LLM_USER_PATH", systems=("linux",)),
                Location(f"~/Library/Application Support/{FOLDER}", "logs.db", env="LLM_USER_PATH", systems=("macos",)),
                Location(f"~/AppData/Roaming/{FOLDER}", "logs.db", env="LLM_USER_PATH", systems=("windows",)),
            ),
        )
    )
