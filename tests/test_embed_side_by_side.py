"""Embedding many texts: one text a forward pass on one thread, passes side by side, no spinning."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import numpy as np
import pytest
from conftest import SAMPLE

from archivist.semantic import chunking, model, onnx_model

HOSTILE = ["", " \n\t ", "x", "日本語 🙂", "\x00\ufffd", "The quick brown fox jumps over the lazy dog. " * 60]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """The sample workspace's chunks, and texts no chunker would make."""
    files = sorted(SAMPLE.rglob("*.md"))
    return [piece.text for path in files for piece in chunking.chunk(path.read_text(), path.stem)] + HOSTILE


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1)


def test_passes_side_by_side_give_the_vectors_of_one_pass_at_a_time(texts):
    encoder = onnx_model.load()
    one_at_a_time = encoder.encode(texts, threads=0)  # (as the embedding run did: ONNX Runtime's own pool)
    side_by_side = encoder.encode(texts, threads=onnx_model.BULK_THREADS, workers=4)
    assert len(texts) > 40 and side_by_side.shape == one_at_a_time.shape
    assert cosines(side_by_side, one_at_a_time).min() >= 0.999


def test_each_vector_lands_on_its_own_text_whatever_the_order(texts):
    encoder = onnx_model.load()
    shuffled = random.Random(7).sample(texts, len(texts))
    vectors = encoder.encode(shuffled, threads=onnx_model.BULK_THREADS, workers=3)
    alone = np.stack([encoder.encode([text], threads=1)[0] for text in shuffled])
    assert cosines(vectors, alone).min() >= 0.999
    assert cosines(vectors[:-1], alone[1:]).min() < 0.99  # (a row off by one would be seen)


def test_the_embedding_run_passes_one_text_at_a_time_since_int8_passes_of_many_drift(texts):
    """A padded pass of many texts gives the float32 graph the vectors of one at a time, but not the
    int8 graph, which quantizes a pass's activations by the range of the whole pass."""
    source = onnx_model.source_dir()
    float32 = onnx_model.Encoder(onnx_model.ensure_model(source, "float32"), source)
    assert cosines(float32.encode(texts, batch_size=16), float32.encode(texts)).min() >= 0.999
    int8 = onnx_model.load()
    assert onnx_model.WEIGHTS == "int8" and onnx_model.BATCH_SIZE == model.BATCH_SIZE == 1
    assert cosines(int8.encode(texts, batch_size=16, threads=1), int8.encode(texts, threads=1)).min() < 0.999


def test_the_model_embeds_with_one_thread_a_pass_and_a_pass_for_each_usable_core(texts):
    assert onnx_model.BULK_THREADS == 1
    assert onnx_model.bulk_workers() == min(len(os.sched_getaffinity(0)), onnx_model.MAX_WORKERS)
    vectors = np.asarray(model.encode(texts))
    assert cosines(vectors, onnx_model.load().encode(texts, threads=1)).min() >= 0.999
    assert model.encode([]) == [] and len(model.encode(["one text"])) == 1


def test_a_process_held_to_one_core_runs_one_pass_at_a_time():
    script = (
        "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
        "from archivist.semantic import onnx_model; print(onnx_model.bulk_workers())"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "1"


def test_idle_threads_of_a_session_yield_their_core():
    for threads in (onnx_model.QUERY_THREADS, onnx_model.BULK_THREADS, 0):
        options = onnx_model.load().session(threads).get_session_options()
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
