"""codex: Codex CLI's session rollouts (read by ``archivist.agents.codex``)."""

from archivist.agents.hookspecs import Kind, Location, Register, hookimpl


@hookimpl
def register_agent_kinds(register: Register) -> None:
    """Register codex."""
    register(
        Kind(
            name="codex",
            reader="archivist.agents.codex",
            description="Codex CLI's sessions, one rollout file each",
            source="its sessions folder, a folder under it, the Codex home, or one rollout file",
            conversation="rollout (forks without the copied history)",
            locations=(Location("~/.codex", "sessions", env="CODEX_HOME"),),
        )
    )
