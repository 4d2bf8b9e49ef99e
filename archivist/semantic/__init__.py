"""The semantic layer: the embedding model, chunks of documents, their embeddings, and vector search."""
