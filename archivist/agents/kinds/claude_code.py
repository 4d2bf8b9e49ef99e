"""claude-code: Claude Code's sessions and their sub-agents' transcripts (read by ``archivist.agents.claude_code``)."""

from archivist.agents.hookspecs import Kind, Location, Register, hookimpl


@hookimpl
def register_agent_kinds(register: Register) -> None:
    """Register claude-code."""
    register(
        Kind(
            name="claude-code",
            reader="archivist.agents.claude_code",
            description="Claude Code's sessions, with their sub-agents' transcripts",
            source="its projects folder, one project's folder in it, or one session's `.jsonl`",
            conversation=(
                "session; sub-agent transcripts (inline sidechains, `agent-*.jsonl`, `subagents/`) are their own "
                "conversations linked to their parent"
            ),
            locations=(
                Location("~/.claude", "projects", env="CLAUDE_CONFIG_DIR", several=True),
                Location(
                    "~/.config/claude", "projects", env="CLAUDE_CONFIG_DIR", systems=("linux", "macos"), several=True
                ),
            ),
        )
    )
