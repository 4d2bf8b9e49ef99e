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

import bisect
import datetime as dt
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from archivist.agents import Usage
from archivist.archive import rollups

if TYPE_CHECKING:
    from archivist.archive.database import Database

META_KEY = "price_data"
BATCH = 5000  # messages priced again per statement
FOUND_MOST = 100_000  # models and days whose prices are kept at once
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
    day = (timestamp or "")[:10]
    counts = (used.input, used.output, used.cache_write, used.cache_read, used.cache_write_1h)
    if not all(type(count) in (int, float) for count in counts):
        return None  # (a count of another type in a log: no price, never a guess)
    found = _prices(model, day) if _plain(counts) else None
    if found is None:
        return _price(model, *counts, day)
    return found.of(*counts)


def _plain(counts: tuple[int, ...]) -> bool:
    """Whether a response's counts are the plain ones its rates apply to: whole, not negative,
    the hour's cache writes among the cache's writes."""
    return all(type(count) is int and count >= 0 for count in counts) and counts[4] <= counts[2]


@dataclass(frozen=True)
class Rates:
    """A model's prices for the prompts of one range of sizes, in US dollars: for a request, and
    for one token of each kind (the cache's five-minute and one-hour writes apart)."""

    request: Decimal
    input: Decimal
    output: Decimal
    cache_write: Decimal
    cache_write_1h: Decimal
    cache_read: Decimal


@dataclass(frozen=True)
class Prices:
    """A model's prices for as long as one price of the data holds: the rates of each range of
    prompt sizes, a range past each size a long-prompt tier starts above (the whole prompt's
    tokens, cache included, as genai-prices counts them)."""

    starts: tuple[int, ...]
    rates: tuple[Rates, ...]

    def of(self, input: int, output: int, cache_write: int, cache_read: int, cache_write_1h: int) -> float:
        """What a response of these counts costs, in US dollars (exact, as genai-prices reckons it)."""
        rates = self.rates[bisect.bisect_left(self.starts, input + cache_write + cache_read)]
        return float(
            rates.request
            + input * rates.input
            + output * rates.output
            + (cache_write - cache_write_1h) * rates.cache_write
            + cache_write_1h * rates.cache_write_1h
            + cache_read * rates.cache_read
        )


_found: dict[tuple[str, str], Prices | None] = {}
_by_price: dict[int, tuple[object, Prices | None]] = {}


def _prices(model: str, day: str) -> Prices | None:
    """A model's prices on a day, looked up once for each day and made once for each price of the
    data (a price holds for a range of days); None where they cannot be made (the response is
    then priced by genai-prices itself)."""
    key = (model, day)
    if key not in _found:
        if len(_found) >= FOUND_MOST:  # (a log of many models or days not days: memory stays bounded)
            _found.clear()
        _found[key] = _prices_on(model, day)
    return _found[key]


def _prices_on(model: str, day: str) -> Prices | None:
    found = _model(model)
    if found is None:
        return None
    info, provider = found
    when = _moment(day)
    model_price = info.get_prices(when)
    if id(model_price) not in _by_price:
        _by_price[id(model_price)] = (model_price, _made(info, provider, when, model_price))
    return _by_price[id(model_price)][1]


@functools.cache
def _model(model: str) -> tuple[Any, Any] | None:
    """The data's model and provider a log's model name stands for, or None."""
    found = _calculation(model, 0, 0, 0, 0, 0, None)
    return None if found is None else (found.model, found.provider)


def _moment(day: str) -> dt.datetime:
    """The start of a response's day (UTC), or now where its day is unknown: the time its price is looked up for."""
    try:
        return dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)
    except ValueError:
        return dt.datetime.now(dt.UTC)


def _made(info: Any, provider: Any, when: dt.datetime, model_price: Any) -> Prices | None:
    """A price of the data as rates, each read from what genai-prices reckons for a few tokens of
    one kind in each range of prompt sizes; None where it refuses one of them."""
    starts = sorted(
        {tier.start for value in vars(model_price).values() if hasattr(value, "tiers") for tier in value.tiers}
    )
    library = _library()

    def cost(input: int, output: int, cache_write: int, cache_read: int, cache_write_1h: int) -> Decimal:
        counts = library.Usage(input_tokens=input + cache_write + cache_read, output_tokens=output,
                               cache_write_tokens=cache_write, cache_read_tokens=cache_read,
                               cache_write_1h_tokens=cache_write_1h)  # fmt: skip
        return Decimal(info.calc_price(counts, provider, genai_request_timestamp=when).total_price)

    try:
        request = cost(0, 0, 0, 0, 0)
        rates = []
        for size in [min(starts[0], 1) if starts else 1] + [start + 1 for start in starts]:
            per = size or 1
            rates.append(Rates(
                request=request,
                input=(cost(size, 0, 0, 0, 0) - request) / per,
                output=cost(size, 1, 0, 0, 0) - cost(size, 0, 0, 0, 0),
                cache_write=(cost(0, 0, size, 0, 0) - request) / per,
                cache_write_1h=(cost(0, 0, size, 0, size) - request) / per,
                cache_read=(cost(0, 0, 0, size, 0) - request) / per,
            ))  # fmt: skip
    except (LookupError, ValueError, ArithmeticError):
        return None
    return Prices(starts=tuple(starts), rates=tuple(rates))


@functools.lru_cache(maxsize=4096)
def _price(
    model: str, input: int, output: int, cache_write: int, cache_read: int, cache_write_1h: int, day: str
) -> float | None:
    """A response's price reckoned by genai-prices itself, for counts the rates do not apply to."""
    found = _calculation(model, input, output, cache_write, cache_read, cache_write_1h, _moment(day) if day else None)
    return None if found is None else float(found.total_price)


def _calculation(
    model: str,
    input: int,
    output: int,
    cache_write: int,
    cache_read: int,
    cache_write_1h: int,
    when: dt.datetime | None,
) -> Any:
    """genai-prices' reckoning of a response (its model, provider, price and total), or None."""
    library = _library()
    # genai-prices counts the cache's tokens in the input; a log's input here is the rest
    try:
        counts = library.Usage(
            input_tokens=input + cache_write + cache_read,
            output_tokens=output,
            cache_write_tokens=cache_write,
            cache_read_tokens=cache_read,
            cache_write_1h_tokens=cache_write_1h,  # (of the cache's writes, those at the one-hour price)
        )
    except (TypeError, ValueError):
        return None
    try:
        return library.calc_price(counts, model, genai_request_timestamp=when)
    except (LookupError, ValueError):
        provider, _, name = model.partition("/")  # "anthropic/claude-…", as aider and OpenRouter name them
        if not name:
            return None
        try:
            return library.calc_price(counts, name, provider_id=provider, genai_request_timestamp=when)
        except (LookupError, ValueError):
            return None


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
