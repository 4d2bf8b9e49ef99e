"""chatgpt-export: ChatGPT's data exports (read by ``archivist.agents.chatgpt_export``)."""

from archivist.agents.hookspecs import Kind, Register, hookimpl


@hookimpl
def register_agent_kinds(register: Register) -> None:
    """Register chatgpt-export."""
    register(
        Kind(
            name="chatgpt-export",
            reader="archivist.agents.chatgpt_export",
            description="ChatGPT's data exports",
            source="a ChatGPT export, folder or `.zip`",
            conversation="conversation (its current branch)",
        )
    )
