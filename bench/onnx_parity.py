"""The ONNX Runtime route against sentence-transformers (torch): same vectors, same retrieval, speed;
and the int8 graph the encoder runs (onnx_model.WEIGHTS) against the float32 export it is made from.

    python bench/onnx_parity.py [--docs 5183] [--speed-texts 500] [--rounds 3] [--skip-scifact]

1. Parity on varied texts (short, beyond 256 word pieces, unicode, empty-ish): the
   float32 export's max abs difference per text (target <= 1e-4), the int8 graph's
   cosine to torch's vector.
2. SciFact (../shared/eval/scifact, read in place): the corpus (title and abstract,
   as BEIR's evaluation joins them) and the judged test queries embedded by each
   route; max abs difference over all of them, and nDCG@10 of exact dense retrieval
   for each route (targets: float32 equal to torch within 0.002, int8 within 0.005).
3. Bulk speed: texts/s over SciFact abstracts cut by the project's chunker (chunks of
   realistic length), torch against ONNX float32 and int8 on one thread and on one per
   core, in alternating rounds (best round reported, as texts per second and per CPU
   second of all threads: the machine may be shared); int8 over float32 (target >= 2x).
4. Query latency: one short query, ONNX float32 and int8 on 1 and on 2 threads, and
   torch, p50 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_quality import EVAL, judgments, ndcg_at, queries

from archivist.semantic import chunking, model, onnx_model

VARIED = [
    "kubernetes pod restart",
    "x",
    "",
    " ",
    "\n\t  ",
    "?!",
    "Straße naïve café ½ ﬁ Ångström",
    "日本語のテキストと中文文本 한국어 текст на русском",
    "emoji 🙂🚀 and symbols ∑∫√ ≤ ≥",
    "SELECT id, title FROM documents WHERE body MATCH 'vector*' ORDER BY rank;",
    "def f(x):\n    return x ** 2  # a comment\n",
    "word " * 600,  # far beyond 256 word pieces
    "The quick brown fox jumps over the lazy dog. " * 60,
    "antidisestablishmentarianism " * 120,
    "   leading and trailing whitespace   ",
]


def corpus(limit: int | None) -> list[tuple[str, str, str]]:
    """(id, title, text) of the SciFact corpus, in file order."""
    docs = []
    with open(EVAL / "scifact" / "corpus.jsonl", encoding="utf-8") as handle:
        for line in handle:
            doc = json.loads(line)
            docs.append((doc["_id"], doc.get("title") or "", doc["text"]))
            if limit and len(docs) >= limit:
                break
    return docs


ENCODERS: dict[str, onnx_model.Encoder] = {}


def encoder(weights: str) -> onnx_model.Encoder:
    """The float32 export, or the int8 graph made from it."""
    if weights not in ENCODERS:
        source = onnx_model.source_dir()
        ENCODERS[weights] = onnx_model.Encoder(onnx_model.ensure_model(source, weights), source)
    return ENCODERS[weights]


def onnx(texts: list[str], threads: int = onnx_model.BULK_THREADS, weights: str = "float32") -> np.ndarray:
    return encoder(weights).encode(texts, threads=threads)


def int8(texts: list[str], threads: int = onnx_model.BULK_THREADS) -> np.ndarray:
    return onnx(texts, threads, "int8")


def torch_route(texts: list[str]) -> np.ndarray:
    return np.asarray(model.encode_torch(texts), dtype=np.float32)


def timed(encode, texts: list[str]) -> tuple[np.ndarray, float]:
    started = time.perf_counter()
    vectors = encode(texts)
    return vectors, time.perf_counter() - started


def parity() -> None:
    print("1. varied texts (word pieces, max abs difference)")
    tokenizer = encoder("float32").tokenizer
    single = np.concatenate([onnx([text], threads=1) for text in VARIED])
    batched = encoder("float32").encode(VARIED, batch_size=32)  # (padded together)
    reference = torch_route(VARIED)
    for text, a, b, r in zip(VARIED, single, batched, reference):
        pieces = len(tokenizer.encode(text).ids)  # truncated to 256, special tokens included
        print(f"   {pieces:>4} {np.abs(a - r).max():.2e} alone  {np.abs(b - r).max():.2e} in a batch   {text[:40]!r}")
    print(f"   max {max(np.abs(single - reference).max(), np.abs(batched - reference).max()):.2e}")
    cosines = (int8(VARIED) * reference).sum(axis=1)
    print(f"   int8: cosine to torch's vectors, min {cosines.min():.4f}, mean {cosines.mean():.4f}")


def scifact(limit: int | None) -> None:
    docs = corpus(limit)
    texts = [(title + " " + text).strip() for _id, title, text in docs]
    ids = [doc_id for doc_id, _title, _text in docs]
    qrels = judgments("scifact", "test")
    known = set(ids)
    questions = queries("scifact")
    judged = [q for q in qrels if q in questions and set(qrels[q]) & known]
    query_texts = [questions[q] for q in judged]
    print(f"2. SciFact: {len(texts)} documents, {len(judged)} judged test queries")
    results = {}
    for name, encode in (("torch", torch_route), ("onnx", onnx), ("int8", int8)):
        doc_vectors, seconds = timed(encode, texts)
        query_vectors = encode(query_texts)
        ranking = np.argsort(-(query_vectors @ doc_vectors.T), axis=1, kind="stable")[:, :10]
        ndcg = statistics.mean(ndcg_at([ids[i] for i in ranking[row]], qrels[q]) for row, q in enumerate(judged))
        results[name] = (doc_vectors, query_vectors, ndcg)
        print(f"   {name:<5} nDCG@10 {ndcg:.4f}   corpus embedded at {len(texts) / seconds:.1f} texts/s")
    (td, tq, tn), (od, oq, on), (_, _, qn) = results["torch"], results["onnx"], results["int8"]
    print(
        f"   max abs difference: documents {np.abs(td - od).max():.2e}, queries {np.abs(tq - oq).max():.2e}; "
        f"nDCG@10 difference {on - tn:+.4f}; int8 against float32 {qn - on:+.4f} (target within 0.005)"
    )


def speed(count: int, rounds: int) -> None:
    texts = []
    for _id, title, text in corpus(None):
        texts += [piece.text for piece in chunking.chunk(text, title)]
        if len(texts) >= count:
            break
    texts = texts[:count]
    pieces = [len(ids) for ids in encoder("float32").token_ids(texts)]
    print(
        f"3. bulk: {len(texts)} chunks, {statistics.mean(pieces):.0f} word pieces on average "
        f"({os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})"
    )
    routes = {
        "torch (sentence-transformers)": torch_route,  # torch picks one thread per core
        "onnx, 1 thread": lambda batch: onnx(batch, threads=1),
        f"onnx, {os.cpu_count()} threads": lambda batch: onnx(batch, threads=os.cpu_count() or 1),
        "onnx int8, 1 thread": lambda batch: int8(batch, threads=1),
        f"onnx int8, {os.cpu_count()} threads": lambda batch: int8(batch, threads=os.cpu_count() or 1),
    }
    for encode in routes.values():
        encode(texts[:32])  # warm
    rates: dict[str, list[tuple[float, float]]] = {name: [] for name in routes}
    for _round in range(rounds):
        for name, encode in routes.items():
            wall, cpu = time.perf_counter(), time.process_time()
            encode(texts)
            rates[name].append((len(texts) / (time.perf_counter() - wall), len(texts) / (time.process_time() - cpu)))
    for name, pairs in rates.items():
        print(
            f"   {name:<30} best {max(w for w, _c in pairs):5.1f} texts/s, {max(c for _w, c in pairs):5.1f} per CPU second"
            f"   (rounds: {', '.join(f'{w:.1f}' for w, _c in pairs)})"
        )

    best = {name: max(w for w, _c in pairs) for name, pairs in rates.items()}
    cores = os.cpu_count()
    print(
        f"   int8 over float32, {cores} threads: {best[f'onnx int8, {cores} threads'] / best[f'onnx, {cores} threads']:.2f}x"
    )
    print("4. one query (p50 of 200)")
    query = "kubernetes pod restart"
    singles = {
        "onnx, 1 thread": lambda: onnx([query], threads=1),
        "onnx, 2 threads": lambda: onnx([query], threads=2),
        "onnx int8, 1 thread": lambda: int8([query], threads=1),
        "torch": lambda: torch_route([query]),
    }
    for name, run in singles.items():
        for _ in range(10):
            run()
        times = []
        for _ in range(200):
            started = time.perf_counter()
            run()
            times.append((time.perf_counter() - started) * 1000)
        print(f"   {name:<16} {statistics.median(times):.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=None, help="SciFact documents (default: all 5,183)")
    parser.add_argument("--speed-texts", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-scifact", action="store_true")
    args = parser.parse_args()
    parity()
    if not args.skip_scifact:
        scifact(args.docs)
    speed(args.speed_texts, args.rounds)


if __name__ == "__main__":
    main()
