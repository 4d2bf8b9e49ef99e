"""A default similarity floor for semantic search, calibrated on SciFact's train split.

    python bench/similarity_floor.py [--keep 0.99] [--eval-split test]

Reuses bench/retrieval_quality.py's archive of SciFact (bench/out/eval-scifact,
read in place from ../shared/eval/scifact; only the first run pays for embedding).

1. For every judged train query, the cosine similarity of each relevant document
   (its best chunk: what the `search` query's min_similarity is compared with),
   of the nearest non-relevant documents, and of a fixed list of nonsense queries
   against the whole corpus, computed from the archive's own vectors and query
   embedding (cross-checked against the `search` query's semantic scores).
2. The rule: the floor is the relevant documents' (1 - keep) quantile, rounded
   down to 0.01, i.e. the highest 0.01 step that keeps at least `keep` of the
   relevant train documents. It must lie above every nonsense query's best
   similarity; when it does not, keep steps down by 1% (to --min-keep) until it does.
   200 other random strings (held out) and a few off-topic real questions show how
   the floor fares beyond the list it was set against.
3. The eval split's nDCG@10 and Recall@100 for semantic and hybrid with
   min_similarity = floor and without, and how many semantic results (and hybrid
   totals) the nonsense queries get with and without it; then hybrid at a few other
   floors, for sensitivity only.

The first run embeds the corpus (5,183 abstracts, 8,909 chunks): about 17 minutes on
two busy cores; later runs take a few minutes.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import string
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_quality import judgments, load_workspace, ndcg_at, queries, recall_at

from archivist.queries.runner import Archive
from archivist.semantic.embeddings import embed_workspace
from archivist.semantic.onnx_model import query_vector
from archivist.semantic.vectors import matrix
from archivist.workspace import archive_path

COLLECTION = "scifact"
CHUNK_WINDOW = 300  # the `search` query's semantic step looks at the 300 nearest chunks
FIXED_NONSENSE = [
    "xyzzyplugh",
    "qwerty asdf zxcv",
    "asdfghjkl",
    "zxcvbnm qwertyuiop",
    "foo bar baz",
    "blorptastic frumious snizzle",
    "glarb wibblefax",
    "florbnik quazzle dwoomp",
    "lorem ipsum dolor sit amet",
    "aaaaaaaa",
    "hjkl hjkl hjkl",
    "snargle bloop",
]


# Real questions about something SciFact never covers: reported, not part of the rule.
OFF_TOPIC = [
    "best pizza restaurants in naples",
    "how to change a flat bicycle tire",
    "who won the 1998 football world cup",
    "python list comprehension syntax",
    "cheap flights to lisbon in may",
    "chocolate cake recipe without eggs",
]


def random_strings(n: int, seed: int) -> list[str]:
    """Random lower-case letter strings of one to three 'words' (4-12 letters each), seeded."""
    rng = random.Random(seed)
    made = []
    for _ in range(n):
        words = rng.randint(1, 3)
        made.append(" ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 12))) for _ in range(words)))
    return made


def nonsense_queries() -> list[str]:
    """The calibration nonsense: the fixed list, then 12 random strings (seed 7)."""
    return FIXED_NONSENSE + random_strings(12, seed=7)


class Scorer:
    """Best-chunk cosine similarity of every document to a query, from the archive's vectors."""

    def __init__(self, archive: Archive) -> None:
        db_path = str(archive.db_path.resolve())
        self.chunks = matrix(db_path, "archivist_chunks")
        chunk_document = dict(archive.conn.execute("select id, document_id from chunks").fetchall())
        external = dict(archive.conn.execute("select id, external_id from documents").fetchall())
        self.document_ids = sorted(external)
        self.external = [external[i] for i in self.document_ids]
        self.position = {ext: n for n, ext in enumerate(self.external)}
        index = {doc: n for n, doc in enumerate(self.document_ids)}
        self.owner = np.array([index[chunk_document[cid]] for cid in self.chunks.ids], dtype=np.int64)

    def scores(self, text: str) -> tuple[np.ndarray, float]:
        """(best-chunk similarity per document, the 300th-best chunk similarity: the SQL's window)."""
        vector = np.frombuffer(query_vector(text), dtype="<f4")
        vector = vector / (np.linalg.norm(vector) or 1.0)
        chunk_scores = self.chunks.vectors @ vector
        best = np.full(len(self.document_ids), -np.inf, dtype=np.float32)
        np.maximum.at(best, self.owner, chunk_scores)
        window = float(np.partition(chunk_scores, -CHUNK_WINDOW)[-CHUNK_WINDOW])
        return best, window


def quantiles(values: list[float], label: str) -> None:
    ordered = np.sort(np.asarray(values))
    qs = [0.0, 0.01, 0.02, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 1.0]
    parts = " ".join(f"p{int(q * 100)}={np.quantile(ordered, q):.3f}" for q in qs)
    print(f"  {label:<44} n={len(values):<5d} {parts}")


def kept(values: list[float], floor: float) -> float:
    return sum(v >= floor for v in values) / len(values)


def choose_floor(relevant: list[float], nonsense_max: float, keep: float, min_keep: float) -> tuple[float, float]:
    """(floor, keep used): the (1 - keep) quantile, down to 0.01; keep steps down until it clears nonsense."""
    ordered = np.sort(np.asarray(relevant))
    rate = keep
    while True:
        floor = math.floor(float(np.quantile(ordered, 1 - rate, method="lower")) * 100 + 1e-9) / 100
        if floor > nonsense_max or rate - 0.01 < min_keep - 1e-9:
            return floor, rate
        rate = round(rate - 0.01, 4)


def evaluate(
    archive: Archive,
    external: dict[int, str],
    texts: dict[str, str],
    qrels: dict[str, dict[str, int]],
    mode: str,
    floor: float | None,
) -> tuple[float, float, float, int, int]:
    """Mean nDCG@10, Recall@100, the median response total, and how many queries have a total under 100 / of 0."""
    ndcgs, recalls, totals = [], [], []
    for query_id in qrels:
        params = {"query": texts[query_id], "mode": mode, "page_size": 100}
        if floor is not None:
            params["min_similarity"] = floor
        response = archive.search(params)
        ranked = [external[row["id"]] for row in response["results"]]
        ndcgs.append(ndcg_at(ranked, qrels[query_id]))
        recalls.append(recall_at(ranked, qrels[query_id]))
        totals.append(response["total"])
    return (
        statistics.mean(ndcgs),
        statistics.mean(recalls),
        statistics.median(totals),
        sum(t < 100 for t in totals),
        sum(t == 0 for t in totals),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=float, default=0.99, help="share of relevant train documents to keep (0.99)")
    parser.add_argument("--min-keep", type=float, default=0.95, help="lowest keep to step down to (0.95)")
    parser.add_argument("--calibration-split", default="train")
    parser.add_argument("--eval-split", default="test")
    parser.add_argument("--held-out", type=int, default=200, help="random strings (seed 11) checked against the floor")
    parser.add_argument(
        "--sweep",
        default="0.25,0.30,0.35,0.40",
        help="other floors to report hybrid on the eval split for (sensitivity only; '' for none)",
    )
    args = parser.parse_args()

    workspace = load_workspace(COLLECTION)
    started = time.perf_counter()
    result = embed_workspace(workspace)
    print(
        f"{COLLECTION}: {result.embedded} documents embedded now, {result.skipped} already "
        f"({result.chunks_embedded} chunks sent to the model) in {time.perf_counter() - started:.1f}s"
    )

    texts = queries(COLLECTION)
    train = {q: rel for q, rel in judgments(COLLECTION, args.calibration_split).items() if q in texts}
    test = {q: rel for q, rel in judgments(COLLECTION, args.eval_split).items() if q in texts}
    nonsense = nonsense_queries()

    with Archive(archive_path(workspace)) as archive:
        external = dict(archive.conn.execute("select id, external_id from documents").fetchall())
        scorer = Scorer(archive)
        print(
            f"{len(scorer.document_ids)} documents, {len(scorer.chunks.ids)} chunks; "
            f"{len(train)} judged {args.calibration_split} queries, {len(test)} judged {args.eval_split} queries"
        )

        # Cross-check: the search query's semantic scores are these best-chunk similarities.
        worst = 0.0
        for query_id in list(train)[:20]:
            best, _ = scorer.scores(texts[query_id])
            for row in archive.search({"query": texts[query_id], "mode": "semantic", "page_size": 100})["results"]:
                worst = max(worst, abs(row["score"] - float(best[scorer.position[row["entity_id"]]])))
        print(f"cross-check on 20 queries: largest |search score - best-chunk similarity| = {worst:.2e}")

        started = time.perf_counter()
        relevant, relevant_best, relevant_outside = [], [], 0
        first_other, tenth_other, hundredth_doc = [], [], []
        for query_id, judged in train.items():
            best, window = scorer.scores(texts[query_id])
            sims = [float(best[scorer.position[doc]]) for doc in judged if doc in scorer.position]
            relevant.extend(sims)
            relevant_best.append(max(sims))
            relevant_outside += sum(s < window for s in sims)
            others = best.copy()
            for doc in judged:
                if doc in scorer.position:
                    others[scorer.position[doc]] = -np.inf
            top = np.sort(others)[::-1]
            first_other.append(float(top[0]))
            tenth_other.append(float(top[9]))
            hundredth_doc.append(float(np.sort(best)[::-1][99]))
        nonsense_best = {}
        for text in nonsense:
            best, _ = scorer.scores(text)
            nonsense_best[text] = float(best.max())
        print(
            f"scored {len(train)} {args.calibration_split} queries and {len(nonsense)} nonsense queries "
            f"in {time.perf_counter() - started:.1f}s"
        )

        print(f"\ncosine similarities ({args.calibration_split} split; a document's similarity is its best chunk's)")
        quantiles(relevant, "relevant documents")
        quantiles(relevant_best, "best relevant document per query")
        quantiles(first_other, "nearest non-relevant document per query")
        quantiles(tenth_other, "10th nearest non-relevant document per query")
        quantiles(hundredth_doc, "100th nearest document per query")
        quantiles(list(nonsense_best.values()), "nonsense queries: nearest document")
        print(
            f"  relevant documents outside the 300-chunk window (never semantic candidates): "
            f"{relevant_outside} of {len(relevant)}"
        )
        nonsense_max = max(nonsense_best.values())
        print("  nonsense queries, nearest document's similarity:")
        for text, value in sorted(nonsense_best.items(), key=lambda item: -item[1]):
            print(f"    {value:.3f}  {text!r}")

        floor, rate = choose_floor(relevant, nonsense_max, args.keep, args.min_keep)
        print(
            f"\nrule: the highest 0.01 step keeping >= {args.keep:.0%} of relevant {args.calibration_split} "
            f"documents, stepping keep down to {args.min_keep:.0%} until it exceeds the nonsense maximum"
        )
        for candidate in (0.15, 0.20, 0.25, 0.30, floor):
            print(
                f"  floor {candidate:.2f}: keeps {kept(relevant, candidate):.1%} of relevant documents, "
                f"{kept(relevant_best, candidate):.1%} of queries' best relevant document, "
                f"{kept(first_other, candidate):.1%} of queries' nearest non-relevant; "
                f"{sum(v >= candidate for v in nonsense_best.values())} of {len(nonsense)} nonsense queries "
                f"have any document at or above it"
            )
        clears = floor > nonsense_max
        print(
            f"CHOSEN FLOOR {floor:.2f} (keep {rate:.0%}); nonsense maximum {nonsense_max:.3f}: "
            f"{'cleared' if clears else 'NOT cleared'} by {floor - nonsense_max:+.3f}"
        )

        held_out_texts = random_strings(args.held_out, seed=11)
        held_out = [float(scorer.scores(text)[0].max()) for text in held_out_texts]
        if held_out:
            quantiles(held_out, f"held-out nonsense ({args.held_out} random, seed 11)")
            above = sorted(((v, t) for v, t in zip(held_out, held_out_texts) if v >= floor), reverse=True)
            print(
                f"  held-out nonsense with any document >= {floor:.2f}: {len(above)} of {len(held_out)}"
                + "".join(f"\n    {v:.3f}  {t!r}" for v, t in above)
            )
        print("  off-topic real questions (not nonsense; not part of the rule), nearest document's similarity:")
        for text in OFF_TOPIC:
            best, _ = scorer.scores(text)
            print(f"    {float(best.max()):.3f}  {text!r}: {int((best >= floor).sum())} documents >= {floor:.2f}")

        print(
            f"\nnonsense queries through `search` (semantic results / hybrid total), without floor -> with {floor:.2f}"
        )
        for text in nonsense:
            without = archive.search({"query": text, "mode": "semantic", "page_size": 100})
            with_floor = archive.search({"query": text, "mode": "semantic", "page_size": 100, "min_similarity": floor})
            hybrid = archive.search({"query": text, "mode": "hybrid", "page_size": 100})
            hybrid_floor = archive.search({"query": text, "mode": "hybrid", "page_size": 100, "min_similarity": floor})
            print(
                f"  {text!r:<36} semantic {without['total']:>3} -> {with_floor['total']:>3}   "
                f"hybrid total {hybrid['total']:>3} -> {hybrid_floor['total']:>3}"
            )

        print(f"\n{args.eval_split} split, {len(test)} judged queries (median total = the response's total)")
        for mode in ("semantic", "hybrid"):
            for applied in (None, floor):
                ndcg, recall, total, under, empty = evaluate(archive, external, texts, test, mode, applied)
                label = "no floor" if applied is None else f"min_similarity {applied:.2f}"
                print(
                    f"  {mode:<9} {label:<20} nDCG@10 {ndcg:.3f}   Recall@100 {recall:.3f}   median total {total:g}"
                    f"   totals < 100: {under}, = 0: {empty}"
                )
        ndcg, recall, total, under, empty = evaluate(archive, external, texts, test, "keyword", None)
        print(
            f"  {'keyword':<9} {'(no floor applies)':<20} nDCG@10 {ndcg:.3f}   Recall@100 {recall:.3f}   "
            f"median total {total:g}   totals < 100: {under}, = 0: {empty}"
        )
        sweep = [float(v) for v in args.sweep.split(",") if v.strip()]
        if sweep:
            print(
                f"  sensitivity (other floors, {args.eval_split} split; reported only, the floor comes from "
                f"{args.calibration_split}):"
            )
            for other in sweep:
                ndcg, recall, total, under, empty = evaluate(archive, external, texts, test, "hybrid", other)
                print(
                    f"    hybrid    min_similarity {other:.2f}  nDCG@10 {ndcg:.3f}   Recall@100 {recall:.3f}   "
                    f"median total {total:g}"
                )


if __name__ == "__main__":
    main()
