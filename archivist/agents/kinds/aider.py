"""aider: a repository's aider chat history (read by ``archivist.agents.aider``)."""

from archivist.agents.hookspecs import Kind, Register, hookimpl


@hookimpl
def register_agent_kinds(register: Register) -> None:
    """Register aider."""
    register(
        Kind(
            name="aider",
            reader="archivist.agents.aider",
            description="aider's chat history of a repository",
            source="a repository holding `.aider.chat.history.md`, or that file",
            conversation='"aider chat started at" session',
        )
    )
