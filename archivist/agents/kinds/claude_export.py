"""claude-export: claude.ai's data exports (read by ``archivist.agents.claude_export``)."""

from archivist.agents.hookspecs import Kind, Register, hookimpl


@hookimpl
def register_agent_kinds(register: Register) -> None:
    """Register claude-export."""
    register(
        Kind(
            name="claude-export",
            reader="archivist.agents.claude_export",
            description="claude.ai's data exports",
            source="a claude.ai export, folder or `.zip`",
            conversation="conversation (its current branch)",
        )
    )
