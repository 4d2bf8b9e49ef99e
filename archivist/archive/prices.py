"""What each model response cost: its tokens priced from maintained price data, never a table of our own.

The prices are pydantic's ``genai-prices`` (its data snapshot, shipped with the package and
never fetched at run time): a response is priced by its model and its time (prices change),
its input, output, cache write (those for an hour apart) and cache read tokens each at the
provider's own price for them, long prompts at their tier. A model named with its provider (``anthropic/claude-…``)
is looked for at that provider. A model the data does not know (at a provider it does not
know: ``copilot/…``), or a response without a model, has no price (NULL): never a guess. Each message's price is stored with it
(``messages.price``), and the version of the data that priced it in ``archive_meta``
(``price_data``): when that version changes, every priced message is priced again.

What a log itself states a response cost (aider, OpenCode, Cline) is kept apart, in
``messages.cost``.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from archivist.agents import Usage
from archivist.archive import rollups

if TYPE_CHECKING:
    from archivist.archive.database import Database

META_KEY = "price_data"
BATCH = 5000  # messages priced again per statement
USAGE_ROWS_SQL = """
SELECT m.id, m.model, coalesce(m.timestamp, d.extra ->> '$.started'), m.input_tokens, m.output_tokens, m.cache_write_tokens, m.cache_read_tokens,
       coalesce(m.cache_write_1h_tokens, 0), json_extract(d.extra, '$.models[#-1]') AS session_model
FROM messages m JOIN documents d ON d.id = m.document_id
WHERE m.input_tokens IS NOT NULL AND m.id > :after
ORDER BY m.id LIMIT :batch
"""


@functools.cache
def _library() -> Any:
    """genai-prices, imported once where a price is first needed (it loads its data then)."""
    import genai_prices

    return genai_prices


def data_version() -> str:
    """The price data in use: the version of the package that ships it."""
    return f"genai-prices {_library().__version__}"


def price(model: str | None, used: Usage | None, timestamp: str | None) -> float | None:
    """A response's price in US dollars, or None: no usage, no model, or a model the data does not know."""
    if used is None or not model:
        return None
    return _price(
        model, used.input, used.output, used.cache_write, used.cache_read, used.cache_write_1h, (timestamp or "")[:10]
    )


@functools.lru_cache(maxsize=65536)
def _price(
    model: str, input: int, output: int, cache_write: int, cache_read: int, cache_write_1h: int, day: str
) -> float | None:
    library = _library()
    try:
        when = dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC) if day else None
    except ValueError:
        when = None
    # genai-prices counts the cache's tokens in the input; a log's input here is the rest
    counts = library.Usage(
        input_tokens=input + cache_write + cache_read,
        output_tokens=output,
        cache_write_tokens=cache_write,
        cache_read_tokens=cache_read,
        cache_write_1h_tokens=cache_write_1h,  # (of the cache's writes, those at the one-hour price)
    )
    try:
        found = library.calc_price(counts, model, genai_request_timestamp=when)
    except (LookupError, ValueError):
        provider, _, name = model.partition("/")  # "anthropic/claude-…", as aider and OpenRouter name them
        if not name:
            return None
        try:
            found = library.calc_price(counts, name, provider_id=provider, genai_request_timestamp=when)
        except (LookupError, ValueError):
            return None
    return float(found.total_price)


def price_again(db: Database) -> int:
    """Price every message with usage again when the price data is not the data that priced
    them (a new version of genai-prices): how many were priced."""
    version = data_version()
    stored = db.execute("SELECT value FROM archive_meta WHERE key = ?", [META_KEY]).fetchone()
    if stored is not None and stored[0] == version:
        return 0
    priced = 0
    for batch in _batches(db):
        db.conn.executemany("UPDATE messages SET price = ? WHERE id = ?", batch)
        priced += len(batch)
    db.execute("INSERT OR REPLACE INTO archive_meta (key, value) VALUES (?, ?)", [META_KEY, version])
    rollups.write_all_usage(db)
    return priced


def _batches(db: Database) -> Iterator[list[tuple[float | None, int]]]:
    """The messages with usage, their new prices, a batch at a time (by id: a page's rows are read whole)."""
    after = -1
    while rows := db.execute(USAGE_ROWS_SQL, {"after": after, "batch": BATCH}).fetchall():
        batch = []
        for id_, model, timestamp, *counts, session_model in rows:
            used = Usage(input=counts[0], output=counts[1], cache_write=counts[2], cache_read=counts[3])
            used.cache_write_1h = counts[4]
            batch.append((price(model or session_model, used, timestamp), id_))
        yield batch
        after = rows[-1][0]
