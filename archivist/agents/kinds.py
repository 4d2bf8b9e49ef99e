"""The kinds of agent logs that can be a source, each with the module of ``archivist.agents`` that reads it.

A module of its own, with no imports, so that what only names the kinds (the command's
help, the checks of a search's ``agents``) never loads the readers.
"""

MODULES = {
    "claude-code": "claude_code",
    "codex": "codex",
    "gemini-cli": "gemini_cli",
    "claude-export": "claude_export",
    "chatgpt-export": "chatgpt_export",
    "aider": "aider",
    "specstory": "specstory",
    "llm": "llm_logs",
}
KINDS = tuple(MODULES)
