"""How much of each kind's sample reaches the archive: its content bytes retained, dropped on purpose, lost.

Indexes every built-in kind's sample (sample-agent-logs/) into one fresh archive with the real indexer and
measures each string the sample holds as tests/test_lossless.py does: found in what the archive stores for
the kind's sessions (retained), named by the kind's ``[dropped]`` table (dropped on purpose), or neither
(lost). Prints, per kind, the bytes of each and the share retained; --lost lists the lost strings.

    .venv/bin/python bench/lossless.py
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import lossless


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lost", action="store_true", help="list each lost string under its kind")
    args = parser.parse_args()
    samples = lossless.samples()
    with tempfile.TemporaryDirectory() as folder:
        archive = lossless.index_sources(Path(folder) / "workspace", samples)
        tallies = {
            kind: lossless.measure(lossless.held(source), lossless.kept(archive, kind), lossless.dropped(kind))
            for kind, source in samples.items()
        }
    print(f"{'kind':<16}{'content':>9}{'retained':>10}{'dropped':>9}{'lost':>7}{'retained %':>12}")
    for kind, tally in tallies.items():
        print(f"{kind:<16}{tally.total:>9}{tally.retained:>10}{tally.dropped:>9}{tally.lost:>7}{tally.share():>11.1f}%")
        for string in (tally.lost_strings or []) if args.lost else []:
            print(f"    lost {string.where}: {string.text[:70]!r}")
    total = lossless.Tally(
        *(sum(getattr(t, field) for t in tallies.values()) for field in ("retained", "dropped", "lost"))
    )
    print(f"{'all':<16}{total.total:>9}{total.retained:>10}{total.dropped:>9}{total.lost:>7}{total.share():>11.1f}%")


if __name__ == "__main__":
    main()
