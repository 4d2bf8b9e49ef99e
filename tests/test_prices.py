"""A response's price: its model's rates, looked up once for each price of the data, give to the
last digit what genai-prices' own calc_price gives, on every sample log and on any counts."""

import datetime as dt

import genai_prices
import pytest
import sqlite_utils
from conftest import sample_source, write_files
from genai_prices.data import providers
from hypothesis import given, settings
from hypothesis import strategies as st

from archivist.agents import Usage, registry
from archivist.archive import prices
from archivist.archive.indexer import index_workspace
from archivist.workspace import archive_path

KINDS = sorted(registry.kinds(registry.manager(entry_points=False)))
MODELS = sorted(f"{provider.id}/{model.id}" for provider in providers for model in provider.models)
CLAUDE = ["claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001", "claude-opus-4-5"]


def calculated(model: str, used: Usage, day: str) -> float | None:
    """genai-prices' own figure for a response: its calc_price, at the start of the response's day."""
    counts = genai_prices.Usage(
        input_tokens=used.input + used.cache_write + used.cache_read,
        output_tokens=used.output,
        cache_write_tokens=used.cache_write,
        cache_read_tokens=used.cache_read,
        cache_write_1h_tokens=used.cache_write_1h,
    )
    when = dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC)
    try:
        return float(genai_prices.calc_price(counts, model, genai_request_timestamp=when).total_price)
    except (LookupError, ValueError):
        provider, _, name = model.partition("/")
        try:
            found = genai_prices.calc_price(counts, name, provider_id=provider, genai_request_timestamp=when)
        except (LookupError, ValueError):
            return None
        return float(found.total_price) if name else None


def usage(input: int, output: int, cache_write: int, cache_read: int, cache_write_1h: int) -> Usage:
    used = Usage(input=input, output=output, cache_write=cache_write, cache_read=cache_read)
    used.cache_write_1h = cache_write_1h
    return used


@pytest.fixture(scope="module")
def every_sample(tmp_path_factory):
    workspace = write_files(tmp_path_factory.mktemp("prices") / "ws", {"notes/a.md": "# A\n"})
    index_workspace(workspace, log_sources=[(kind, sample_source(kind)) for kind in KINDS])
    return sqlite_utils.Database(archive_path(workspace))


def test_every_sample_response_is_priced_as_genai_prices_prices_it(every_sample):
    rows = list(
        every_sample.query(
            "select m.model, coalesce(m.timestamp, d.extra ->> '$.started') as at, m.input_tokens, m.output_tokens, "
            "m.cache_write_tokens, m.cache_read_tokens, coalesce(m.cache_write_1h_tokens, 0) as cache_write_1h, "
            "m.price from messages m join documents d on d.id = m.document_id "
            "where m.input_tokens is not null and m.model is not null"
        )
    )
    priced = [row for row in rows if row["price"] is not None]
    assert len(priced) >= 20 and {row["model"] for row in priced} >= {"claude-sonnet-4-5-20250929"}
    for row in rows:
        used = usage(row["input_tokens"], row["output_tokens"], row["cache_write_tokens"], row["cache_read_tokens"],
                     row["cache_write_1h"])  # fmt: skip
        assert row["price"] == calculated(row["model"], used, row["at"][:10]), row


@st.composite
def counts(draw) -> Usage:
    cache_write = draw(st.integers(0, 2_000_000))
    return usage(
        draw(st.integers(0, 2_000_000)),
        draw(st.integers(0, 500_000)),
        cache_write,
        draw(st.integers(0, 5_000_000)),
        draw(st.one_of(st.integers(0, cache_write), st.integers(0, 2_000_000))),  # (now and then more than written)
    )


DAYS = st.dates(dt.date(2023, 1, 1), dt.date(2027, 12, 31)).map(dt.date.isoformat)


@settings(max_examples=600, deadline=None)
@given(model=st.sampled_from(MODELS), used=counts(), day=DAYS)
def test_any_model_of_the_data_on_any_day_is_priced_as_genai_prices_prices_it(model, used, day):
    assert prices.price(model, used, f"{day}T13:45:00.000Z") == calculated(model, used, day)


@settings(max_examples=300, deadline=None)
@given(model=st.sampled_from(CLAUDE), used=counts(), day=DAYS)
def test_claude_models_past_their_long_prompt_tier_are_priced_at_it(model, used, day):
    assert prices.price(model, used, f"{day}T08:00:00Z") == calculated(model, used, day)


def test_a_long_prompt_costs_the_tier_price_from_its_first_token_past_the_tier():
    short = prices.price("claude-sonnet-4-5", usage(200_000, 1000, 0, 0, 0), "2025-11-01T00:00:00Z")
    long = prices.price("claude-sonnet-4-5", usage(200_001, 1000, 0, 0, 0), "2025-11-01T00:00:00Z")
    assert short == calculated("claude-sonnet-4-5", usage(200_000, 1000, 0, 0, 0), "2025-11-01")
    assert long == calculated("claude-sonnet-4-5", usage(200_001, 1000, 0, 0, 0), "2025-11-01")
    assert short is not None and long is not None and long > 1.9 * short


@pytest.mark.parametrize("count", [True, -5, "12", None, [1], 1.5])
def test_a_count_of_a_wrong_type_or_sign_is_never_priced_nor_a_crash(count):
    used = usage(10, 10, 0, 0, 0)
    used.output = count
    found = prices.price("claude-sonnet-4-5", used, "2025-11-01T00:00:00Z")
    if count == 1.5:  # (a fraction of a token is still a count genai-prices prices)
        reckoned = genai_prices.calc_price(genai_prices.Usage(input_tokens=10, output_tokens=1.5), "claude-sonnet-4-5")
        assert found == pytest.approx(float(reckoned.total_price))
    else:
        assert found is None


def test_an_unknown_model_or_none_or_a_day_not_a_day_is_handled():
    assert prices.price("no-such-model-anywhere", usage(10, 1, 0, 0, 0), "2025-11-20T00:00:00Z") is None
    assert prices.price("copilot/claude-sonnet-4-5", usage(10, 1, 0, 0, 0), "2025-11-20T00:00:00Z") is None
    assert prices.price(None, usage(10, 1, 0, 0, 0), None) is None
    assert prices.price("claude-sonnet-4-5", None, None) is None
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert prices.price("claude-sonnet-4-5", usage(10, 1, 0, 0, 0), "not a day") == calculated(
        "claude-sonnet-4-5", usage(10, 1, 0, 0, 0), today
    )


def test_prices_kept_for_many_days_stay_bounded_and_exact(monkeypatch):
    monkeypatch.setattr(prices, "FOUND_MOST", 10)
    for n in range(60):
        day = (dt.date(2025, 1, 1) + dt.timedelta(days=n)).isoformat()
        used = usage(100 + n, 50, 2000, 30_000, 0)
        assert prices.price("claude-opus-4-1-20250805", used, f"{day}T01:02:03Z") == calculated(
            "claude-opus-4-1-20250805", used, day
        )
        assert prices.price("claude-opus-4-1-20250805", used, f"day {n}") is not None
    assert len(prices._found) <= 10
