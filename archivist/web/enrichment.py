"""A datasette-enrichments enrichment: embed the selected documents from the table UI."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from datasette_enrichments import Enrichment

from archivist.semantic.embeddings import embed_archive


class EmbedDocuments(Enrichment):
    name = "Embed for semantic search"
    slug = "archivist-embed"
    description = (
        "Embed the selected documents with all-MiniLM-L6-v2 so that they show up in semantic, "
        "hybrid and similar-document searches. Unchanged documents are skipped."
    )
    batch_size = 16

    async def enrich_batch(
        self, datasette: Any, db: Any, table: str, rows: list, pks: list, config: dict, job_id: int
    ) -> int:
        if table != "documents":
            raise self.Cancel("Only the documents table of an archive can be embedded")
        ids = {int(row["id"]) for row in rows}
        # The model and the writes run off the event loop, on the pipeline's own connection.
        await asyncio.to_thread(embed_archive, Path(db.path), None, None, ids)
        return len(rows)
