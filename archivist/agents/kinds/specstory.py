"""specstory: a project's SpecStory transcripts (read by ``archivist.agents.specstory``)."""

from archivist.agents.hookspecs import Kind, Register, hookimpl


@hookimpl
def register_agent_kinds(register: Register) -> None:
    """Register specstory."""
    register(
        Kind(
            name="specstory",
            reader="archivist.agents.specstory",
            description="SpecStory's saved transcripts of a project's chats",
            source="a project holding `.specstory/history/`, that folder, or one transcript",
            conversation="transcript",
        )
    )
