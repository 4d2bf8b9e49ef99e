"""A seeded generator of synthetic workspaces: N conversations across dates and types.

    python bench/synth.py OUT_DIR --conversations 100000 --seed 42

The same seed and N always give the same files. Layouts are mixed the way real
workspaces are: old month folders, new day folders and typed folders.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
from pathlib import Path

TOPICS = {
    "auth": "authentication jwt oauth token refresh session cookie login pkce expiry clock skew signature".split(),
    "kubernetes": "kubernetes pod deployment ingress hpa autoscaling node cluster helm crashloop replica".split(),
    "proxy": "proxy timeout pac winhttp corporate firewall latency join meeting wpad tunnel".split(),
    "speech": "speech sdk decode response latency audio stream recognition token websocket captions".split(),
    "search": "sqlite fts5 bm25 index query ranking trigram vector embedding archive".split(),
    "api": "api gateway endpoint versioning pagination rate limit schema openapi contract client".split(),
    "data": "migration schema backfill postgres replica vacuum partition query plan index".split(),
    "frontend": "react component render state hook css layout accessibility bundle vite".split(),
}
FILLER = (
    "the we it this that should could would because then when after before while also "
    "maybe probably check look see try run test fix change update deploy review merge "
    "issue problem question answer idea plan next step today yesterday week team user"
).split()
TYPES = ["brainstorm", "debug", "plan", "review", "research", "design"]


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


def generate(out: Path, conversations: int, seed: int = 42) -> Path:
    """Write the workspace (skipped when a complete one for the same seed and N is there)."""
    marker = out / ".synth"
    signature = f"{conversations} {seed}\n"
    if marker.exists() and marker.read_text(encoding="utf-8") == signature:
        return out
    rng = random.Random(seed)
    for number in range(conversations):
        relative, text = conversation(rng, number)
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    marker.write_text(signature, encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    generate(args.out, args.conversations, args.seed)
    print(f"{args.conversations} conversations in {args.out}")


if __name__ == "__main__":
    main()
