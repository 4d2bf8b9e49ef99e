"""The MCP surface: the tools (``tools``) over the canned queries, served over stdio (``stdio``) or HTTP.

What the server says about itself lives here, so that the stdio entry can answer
``initialize`` without importing the SDK or the tools.
"""

NAME = "archivist"
INSTRUCTIONS = (
    "Search a workspace of AI conversations, analysis reports, agent memories and tracker records. "
    "Start with search (every kind, with filters): it answers briefly, a snippet per result; a result's id "
    "reads it whole with get_document, or a conversation's messages with get_conversation. search_workspace "
    "searches conversations alone."
)
# What the SDK's MCPServer declares for a server with tools (and empty prompts and resources).
CAPABILITIES = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
# A line of stdin longer than this is cut (before the SDK is up: ``stdio``) or refused
# (``transport``), so that a message without an end cannot fill the memory; what is left of
# it is read as a line of its own.
LINE_LIMIT = 64 * 1024 * 1024
