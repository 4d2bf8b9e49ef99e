"""A seeded generator of synthetic workspaces.

    python bench/synth.py OUT_DIR --conversations 100000 --seed 42
    python bench/synth.py OUT_DIR --documents 1000000 --seed 42

The same seed and N always give the same files. Conversations use the layouts
real workspaces mix: old month folders, new day folders and typed folders.
``--documents N`` writes a workspace of every kind: a tenth conversations, the
rest agent memories (JSONL, tagged, typed, dated; a few undated) and tracker
records (JSONL features, tests, bugs and products across 200 products;
features and products carry no timestamp).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
from pathlib import Path

TOPICS = {
    "auth": [
        "authentication",
        "jwt",
        "oauth",
        "token",
        "refresh",
        "session",
        "cookie",
        "login",
        "pkce",
        "expiry",
        "clock",
        "skew",
        "signature",
    ],
    "kubernetes": [
        "kubernetes",
        "pod",
        "deployment",
        "ingress",
        "hpa",
        "autoscaling",
        "node",
        "cluster",
        "helm",
        "crashloop",
        "replica",
    ],
    "proxy": [
        "proxy",
        "timeout",
        "pac",
        "winhttp",
        "corporate",
        "firewall",
        "latency",
        "join",
        "meeting",
        "wpad",
        "tunnel",
    ],
    "speech": [
        "speech",
        "sdk",
        "decode",
        "response",
        "latency",
        "audio",
        "stream",
        "recognition",
        "token",
        "websocket",
        "captions",
    ],
    "search": ["sqlite", "fts5", "bm25", "index", "query", "ranking", "trigram", "vector", "embedding", "archive"],
    "api": [
        "api",
        "gateway",
        "endpoint",
        "versioning",
        "pagination",
        "rate",
        "limit",
        "schema",
        "openapi",
        "contract",
        "client",
    ],
    "data": ["migration", "schema", "backfill", "postgres", "replica", "vacuum", "partition", "query", "plan", "index"],
    "frontend": ["react", "component", "render", "state", "hook", "css", "layout", "accessibility", "bundle", "vite"],
}
FILLER = [
    "the",
    "we",
    "it",
    "this",
    "that",
    "should",
    "could",
    "would",
    "because",
    "then",
    "when",
    "after",
    "before",
    "while",
    "also",
    "maybe",
    "probably",
    "check",
    "look",
    "see",
    "try",
    "run",
    "test",
    "fix",
    "change",
    "update",
    "deploy",
    "review",
    "merge",
    "issue",
    "problem",
    "question",
    "answer",
    "idea",
    "plan",
    "next",
    "step",
    "today",
    "yesterday",
    "week",
    "team",
    "user",
]
TYPES = ["brainstorm", "debug", "plan", "review", "research", "design"]
MEMORY_TYPES = ["note"] * 5 + ["decision"] * 2 + ["task"] * 2 + ["reference", "observation"]
GENERAL_TAGS = [
    "python",
    "testing",
    "urgent",
    "infra",
    "security",
    "performance",
    "docs",
    "frontend",
    "backend",
    "database",
    "release",
    "bug",
    "customer",
    "meeting",
    "idea",
    "followup",
    "blocked",
    "research",
    "ops",
    "mobile",
]
ENTITY_TYPES = ["feature"] * 30 + ["test"] * 30 + ["bug"] * 39 + ["product"]
START = dt.datetime(2023, 1, 1, tzinfo=dt.UTC)
SPAN_SECONDS = 3 * 365 * 86400
LINES_PER_FILE = 50_000


def paragraph(rng: random.Random, topic: list[str]) -> str:
    words = [rng.choice(topic) if rng.random() < 0.3 else rng.choice(FILLER) for _ in range(rng.randint(25, 60))]
    return " ".join(words).capitalize() + "."


def conversation(rng: random.Random, number: int) -> tuple[str, str]:
    topic_name = rng.choice(list(TOPICS))
    topic = TOPICS[topic_name]
    kind = rng.choice(TYPES)
    day = dt.date(2023, 1, 1) + dt.timedelta(days=rng.randrange(3 * 365))
    slug = f"{number % 1000:03d}-{kind}-{rng.choice(topic)}-{number}"
    layout = rng.random()
    if layout < 0.2:
        folder = f"conversations/{day:%Y-%m}/{slug}"
    elif layout < 0.8:
        folder = f"conversations/{day:%Y-%m-%d}/{slug}"
    else:
        folder = f"{kind}/{day:%Y-%m-%d}/{slug}"
    title = f"# {kind.capitalize()}: {' '.join(rng.sample(topic, 3))}"
    body = "\n\n".join(
        [title, "## User", paragraph(rng, topic), "## Assistant"]
        + [paragraph(rng, topic) for _ in range(rng.randint(2, 5))]
    )
    return f"{folder}/conversation.md", body + "\n"


def memory(rng: random.Random, number: int) -> dict:
    topic_name = rng.choice(list(TOPICS))
    topic = TOPICS[topic_name]
    tags = {topic_name, *rng.sample(GENERAL_TAGS, rng.randint(0, 3))}
    if rng.random() < 0.5:
        tags.add(rng.choice(topic))
    created = START.timestamp() + rng.randrange(SPAN_SECONDS) if rng.random() > 0.02 else None
    return {
        "content": paragraph(rng, topic),
        "content_hash": f"m{number:08d}",
        "tags": sorted(tags),
        "memory_type": rng.choice(MEMORY_TYPES),
        "created_at": created,
    }


def record(rng: random.Random, number: int) -> dict:
    topic = TOPICS[rng.choice(list(TOPICS))]
    entity_type = rng.choice(ENTITY_TYPES)
    dated = entity_type in {"test", "bug"}
    timestamp = dt.datetime.fromtimestamp(START.timestamp() + rng.randrange(SPAN_SECONDS), dt.UTC)
    return {
        "entity_type": entity_type,
        "entity_id": 1_000_000 + number,
        "product_id": int(rng.paretovariate(1.2)) % 200 + 1,
        "title": " ".join(rng.sample(topic, 3)).capitalize(),
        "body": paragraph(rng, topic),
        "timestamp": timestamp.isoformat() if dated else None,
    }


def _write_lines(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def generate_mixed(out: Path, documents: int, seed: int = 42) -> Path:
    """A workspace of every kind: documents/10 conversations, then 2/3 memories and 1/3 records."""
    marker = out / ".synth"
    signature = f"mixed {documents} {seed}\n"
    if marker.exists() and marker.read_text(encoding="utf-8") == signature:
        return out
    conversations = documents // 10
    generate(out, conversations, seed, marker=False)
    rng = random.Random(seed + 1)
    rest = documents - conversations
    memories = rest * 2 // 3
    for kind, count, make in (("memories", memories, memory), ("records", rest - memories, record)):
        for start in range(0, count, LINES_PER_FILE):
            rows = [make(rng, number) for number in range(start, min(count, start + LINES_PER_FILE))]
            _write_lines(out / kind / f"{kind}-{start // LINES_PER_FILE:04d}.jsonl", rows)
    marker.write_text(signature, encoding="utf-8")
    return out


def generate(out: Path, conversations: int, seed: int = 42, marker: bool = True) -> Path:
    """Write the workspace (skipped when a complete one for the same seed and N is there)."""
    done = out / ".synth"
    signature = f"{conversations} {seed}\n"
    if marker and done.exists() and done.read_text(encoding="utf-8") == signature:
        return out
    rng = random.Random(seed)
    for number in range(conversations):
        relative, text = conversation(rng, number)
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if marker:
        done.write_text(signature, encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--documents", type=int, help="a workspace of every kind with this many documents")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    if args.documents:
        generate_mixed(args.out, args.documents, args.seed)
        print(f"{args.documents} documents of every kind in {args.out}")
    else:
        generate(args.out, args.conversations, args.seed)
        print(f"{args.conversations} conversations in {args.out}")


if __name__ == "__main__":
    main()
