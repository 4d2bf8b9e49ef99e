"""gemini-cli: Gemini CLI's chat sessions (read by ``archivist.agents.gemini_cli``)."""

from archivist.agents.hookspecs import Kind, Location, Register, hookimpl


@hookimpl
def register_agent_kinds(register: Register) -> None:
    """Register gemini-cli."""
    register(
        Kind(
            name="gemini-cli",
            reader="archivist.agents.gemini_cli",
            description="Gemini CLI's saved chat sessions",
            source="its `tmp` folder, one project's folder in it, or one session file",
            conversation="session (JSON, or JSONL with its rewrites)",
            # GEMINI_CLI_HOME stands for the home folder: the logs are in its .gemini/tmp
            locations=(Location("~", ".gemini/tmp", env="GEMINI_CLI_HOME"),),
        )
    )
