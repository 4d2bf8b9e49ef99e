"""The MCP surface: the tools (``tools``) over the canned queries, served over stdio (``stdio``) or HTTP.

What the server says about itself (its name and instructions) lives here.
"""

NAME = "archivist"
INSTRUCTIONS = (
    "Search a workspace of AI conversations, analysis reports, agent memories and tracker records. "
    "Start with search (every kind, with filters): it answers briefly, a snippet per result; a result's id "
    "reads it whole with get_document, or a conversation's messages with get_conversation. search_workspace "
    "searches conversations alone."
)
# A line of stdin longer than this is cut (``stdio``): what is left of it is read as a line of
# its own, so that a message without an end cannot fill the memory.
LINE_LIMIT = 64 * 1024 * 1024
