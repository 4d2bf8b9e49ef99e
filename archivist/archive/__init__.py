"""The archive: its schema and migrations, indexing a workspace and its sources into it, and the
sessions of agent logs as it stores them."""
