"""The embedding model through ONNX Runtime: the export, its cache, parity with torch, a search without torch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from archivist.semantic import model, onnx_model

TEXTS = [
    "kubernetes pod restart",
    "x",
    "",
    " \n\t ",
    "Straße naïve café ½ ﬁ Ångström",
    "日本語のテキストと中文文本 한국어 текст на русском 🙂🚀",
    "SELECT id FROM documents WHERE body MATCH 'vector*';",
    "The quick brown fox jumps over the lazy dog. " * 60,  # beyond 256 word pieces
]


def run_python(script: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARCHIVIST_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """A cache folder holding the model exported by the install-time entry point."""
    cache = tmp_path_factory.mktemp("cache")
    env = {**os.environ, "ARCHIVIST_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "archivist.semantic.onnx_model"], env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr == ""
    assert Path(result.stdout.strip()).parent == cache
    return cache


def exported_file(cache: Path) -> Path:
    """The float32 export in a cache folder (beside it, the int8 graph made from it)."""
    (path,) = (path for path in cache.glob("*.onnx") if "-int8-" not in path.name)
    return path


@pytest.fixture(scope="module")
def encoder(cache: Path) -> onnx_model.Encoder:
    return onnx_model.Encoder(exported_file(cache), onnx_model.source_dir())


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1)


def test_the_export_is_named_by_a_hash_of_the_package_model(cache, monkeypatch):
    monkeypatch.setenv("ARCHIVIST_CACHE_DIR", str(cache))
    path = onnx_model.model_path()
    assert path.exists()
    assert path.name == f"all-minilm-l6-v2-{onnx_model.fingerprint()[:16]}.onnx"
    # only the graph, its weights, the int8 graph and the remembered digests: no temporary file left behind
    quantized = onnx_model.quantized_path(path).name
    expected = [path.name, onnx_model.data_path(path).name, quantized, "all-minilm-l6-v2.digests.json"]
    assert sorted(p.name for p in cache.iterdir()) == sorted(expected)
    assert onnx_model.data_path(path).stat().st_size > 80_000_000 > path.stat().st_size
    assert onnx_model.ensure_exported() == path


def test_the_export_has_dynamic_batch_and_sequence_axes(encoder):
    session = encoder.session(1)
    inputs = {i.name: i.shape for i in session.get_inputs()}
    assert set(inputs) == {"input_ids", "attention_mask"}
    assert all(isinstance(dim, str) for shape in inputs.values() for dim in shape)
    for rows, width in ((1, 3), (5, 40), (2, 256)):
        ids = np.full((rows, width), 2000, dtype=np.int64)
        out = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0]
        assert out.shape == (rows, onnx_model.DIMENSIONS)


def test_a_new_package_version_gets_a_new_file(tmp_path, monkeypatch):
    monkeypatch.setenv("ARCHIVIST_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "model"
    (source / "1_Pooling").mkdir(parents=True)
    (source / "config.json").write_text("{}")
    (source / "1_Pooling" / "config.json").write_text("{}")
    weights = source / "model.safetensors"
    weights.write_bytes(b"\0" * 1000)
    first = onnx_model.model_path(source)
    assert onnx_model.model_path(source) == first  # the second time from the remembered digests
    weights.write_bytes(b"\0" * 999 + b"\1")  # same size: the modification time tells
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 1_000_000))
    second = onnx_model.model_path(source)
    assert second != first and second.parent == first.parent
    (source / "config.json").write_text('{"hidden_size": 384}')
    assert onnx_model.model_path(source) not in (first, second)


def test_the_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("ARCHIVIST_CACHE_DIR", str(tmp_path / "a"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert onnx_model.cache_dir() == tmp_path / "a"
    monkeypatch.delenv("ARCHIVIST_CACHE_DIR")
    assert onnx_model.cache_dir() == tmp_path / "xdg" / "archivist"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert onnx_model.cache_dir() == tmp_path / "home" / ".cache" / "archivist"


def test_a_file_is_replaced_whole_or_not_at_all(tmp_path):
    target = tmp_path / "cache" / "digests.json"

    def write(path: Path) -> None:
        path.write_bytes(b"half")
        assert not target.exists()  # nobody sees the file while it is written
        raise RuntimeError("export failed")

    with pytest.raises(RuntimeError):
        onnx_model._replace_atomically(target, write)
    assert list(target.parent.iterdir()) == []
    onnx_model._replace_atomically(target, lambda path: path.write_bytes(b"whole"))
    assert target.read_bytes() == b"whole"
    assert list(target.parent.iterdir()) == [target]


def test_a_graph_appears_only_once_its_weights_are_in_place(tmp_path):
    target = tmp_path / "cache" / "model.onnx"
    weights = onnx_model.data_path(target)

    def failing(path: Path) -> None:
        onnx_model.data_path(path).write_bytes(b"half")
        raise RuntimeError("export failed")

    with pytest.raises(RuntimeError):
        onnx_model._publish(target, failing)
    assert list(target.parent.iterdir()) == []

    def write(path: Path) -> None:
        onnx_model.data_path(path).write_bytes(b"weights")
        path.write_bytes(b"graph")
        assert not target.exists() and not weights.exists()  # nobody sees either while they are written

    real_replace = os.replace
    order = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", lambda source, to: (order.append(Path(to).name), real_replace(source, to)))
        onnx_model._publish(target, write)
    assert order == [weights.name, target.name]  # the weights first: a graph found has its weights
    assert (target.read_bytes(), weights.read_bytes()) == (b"graph", b"weights")
    assert sorted(target.parent.iterdir()) == sorted([target, weights])


def test_a_missing_file_is_exported_on_first_use_once(cache, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("ARCHIVIST_CACHE_DIR", str(tmp_path))
    exported = exported_file(cache)
    calls = []

    def export(target: Path, source: Path) -> Path:  # the real export runs in the cache fixture
        calls.append(target)
        shutil.copy(onnx_model.data_path(exported), onnx_model.data_path(target))
        shutil.copy(exported, target)
        return target

    monkeypatch.setattr(onnx_model, "export", export)
    with caplog.at_level("INFO", logger="archivist"):
        path = onnx_model.ensure_exported()
        assert onnx_model.ensure_exported() == path
    assert calls == [path] and path.parent == tmp_path and path.name == exported.name
    assert [r.message for r in caplog.records] == [f"exporting the embedding model to ONNX once, with torch: {path}"]


def test_onnx_gives_the_vectors_of_sentence_transformers(encoder):
    reference = np.asarray(model.encode_torch(TEXTS), dtype=np.float32)
    batched = encoder.encode(TEXTS, threads=2)
    alone = np.concatenate([encoder.encode([text], threads=1) for text in TEXTS])
    assert batched.shape == alone.shape == (len(TEXTS), onnx_model.DIMENSIONS)
    assert np.abs(batched - reference).max() <= 1e-4
    assert np.abs(alone - reference).max() <= 1e-4
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    assert encoder.encode([]).shape == (0, onnx_model.DIMENSIONS)


def test_texts_are_cut_at_256_word_pieces_as_sentence_transformers_cuts_them(encoder):
    assert encoder.max_seq_length == 256
    long = " ".join(f"word{i}" for i in range(400))
    longer = long + " and a different ending about databases and kubernetes"
    assert len(encoder.token_ids([long])[0]) == 256
    vectors = encoder.encode([long, longer, long[:500]])
    assert np.array_equal(vectors[0], vectors[1])  # what lies past the cut changes nothing
    assert np.abs(vectors[0] - vectors[2]).max() > 1e-2  # while a shorter text is another text
    reference = np.asarray(model.encode_torch([longer]), dtype=np.float32)
    assert np.abs(vectors[1] - reference[0]).max() <= 1e-4


def test_a_search_never_imports_torch_and_writes_one_log_line(cache):
    script = """
import json, logging, sys
logging.basicConfig(level=logging.INFO, format="%(name)s %(levelname)s %(message)s")
from archivist.semantic.onnx_model import query_vector, MODEL_ID
vector = query_vector("kubernetes pod restart")
assert query_vector("kubernetes pod restart") is vector  # cached
heavy = ("torch", "sentence_transformers", "transformers", "llm")
before_llm = sorted(m for m in heavy if m in sys.modules)
import llm
document = llm.get_embedding_model(MODEL_ID).embed("a document about kubernetes")
print(json.dumps({
    "query": llm.decode(vector),
    "document": document,
    "empty": query_vector("   "),
    "query_loaded": before_llm,
    "loaded": sorted(m for m in heavy[:3] if m in sys.modules),
}))
"""
    result = run_python(script, cache)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout)
    assert out["query_loaded"] == [] and out["loaded"] == []  # a query embeds without llm, neither loads torch
    assert out["empty"] is None
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("archivist INFO embedding model ready ("), result.stderr
    reference = np.asarray(model.encode_torch(["kubernetes pod restart", "a document about kubernetes"]))
    found = np.asarray([out["query"], out["document"]], dtype=np.float32)  # (the int8 graph: onnx_model.WEIGHTS)
    assert onnx_model.WEIGHTS == "int8" and cosines(found, reference).min() >= 0.97


def test_the_install_makes_an_int8_graph_beside_the_export_that_gives_nearly_its_vectors(cache, encoder):
    exported = exported_file(cache)
    quantized = onnx_model.quantized_path(exported)
    assert quantized.exists() and onnx_model.ensure_quantized(exported) == quantized  # made once, by the install
    weights = exported.stat().st_size + onnx_model.data_path(exported).stat().st_size
    assert quantized.stat().st_size < weights * 0.7  # the matrix products 8 bits a weight (the word table float)
    int8 = onnx_model.Encoder(quantized, onnx_model.source_dir())
    texts = [text for text in TEXTS if text.strip()]
    reference = np.asarray(model.encode_torch(texts), dtype=np.float32)
    found = cosines(int8.encode(texts), reference)
    assert found.min() >= 0.97 and found.mean() >= 0.985  # (the least: "x", a text of one letter)
    assert np.abs(int8.encode(texts) - encoder.encode(texts)).max() > 1e-3  # (it is another graph)
    assert np.allclose(np.linalg.norm(int8.encode(texts), axis=1), 1.0, atol=1e-5)


def test_the_int8_graph_is_made_whole_or_not_at_all(cache, tmp_path, monkeypatch):
    exported = exported_file(cache)
    copy = tmp_path / exported.name
    shutil.copy(exported, copy)
    shutil.copy(onnx_model.data_path(exported), onnx_model.data_path(copy))
    import onnxruntime.quantization as quantization

    def failing(model_input, model_output, **options):
        Path(model_output).write_bytes(b"half a graph")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(quantization, "quantize_dynamic", failing)
    with pytest.raises(OSError):
        onnx_model.ensure_quantized(copy)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([copy.name, onnx_model.data_path(copy).name])
