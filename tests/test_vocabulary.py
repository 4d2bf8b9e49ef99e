"""The filter vocabulary: what indexing writes, what a search asks for, and a word read back."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from conftest import ROOT, SAMPLE, sample_source
from hypothesis import given, settings
from hypothesis import strategies as st

from archivist import dates, vocabulary
from archivist.archive import schema
from archivist.archive.indexer import index_workspace
from archivist.archive.searched import stored_searched_text
from archivist.documents import filter_tokens
from archivist.queries import terms
from archivist.vocabulary import KEYS, KINDS, decode, encode, expressions, words
from archivist.workspace import archive_path

# the kinds whose samples the frozen words were taken from, in the order the archive numbers
# their sources (log:1:, log:2:, ...)
FROZEN_KINDS = ("claude-code", "codex", "gemini-cli", "claude-export", "chatgpt-export", "aider", "specstory", "llm")
# The words an archive of the sample workspace and agent logs held before the vocabulary was one
# module: every document's filter_tokens, and each message's words as message_index holds them
# (its tokenizer's stems). Archives indexed before keep working only while these stay the same;
# a change to them must also bump documents.PARSER_VERSION and sessions' LAYOUT (a re-index).
FROZEN = Path(__file__).with_name("vocabulary_words.json")
# A log's project can be the folder it was read from: the checkout's own folder is written
# as this stand-in, so the frozen words are the same wherever the project is cloned.
CHECKOUT = str(ROOT).encode().hex()
STAND_IN = b"/srv/archivist".hex()


def sample_archive_words(tmp_path: Path) -> dict[str, dict[str, str]]:
    workspace = tmp_path / "workspace"
    shutil.copytree(SAMPLE, workspace, ignore=shutil.ignore_patterns(".archivist"))
    index_workspace(workspace, log_sources=[(kind, sample_source(kind)) for kind in FROZEN_KINDS])
    db = sqlite_utils.Database(archive_path(workspace))
    stored = {key: words for key, words in db.execute("select key, filter_tokens from documents")}
    keys = dict(db.execute("select id, key from documents").fetchall())
    db.execute("create virtual table temp.message_words using fts5vocab(main, message_index, instance)")
    messages: dict[str, list[str]] = {}
    for term, rowid in db.execute(
        "select term, doc from temp.message_words where col = 'filter_tokens' order by doc, offset"
    ):
        document, seq = divmod(rowid, schema.MESSAGE_IDS)
        messages.setdefault(f"{keys[document]} #{seq}", []).append(term)
    return {
        "documents": {key: portable(words) for key, words in stored.items()},
        "messages": {key: portable(" ".join(found)) for key, found in messages.items()},
    }


def portable(words: str) -> str:
    return words.replace(CHECKOUT, STAND_IN)


ROLE = next(key for key in KEYS if key.name == "role")


TOOL = next(key for key in KEYS if key.name == "tool")
BRANCH = next(key for key in KEYS if key.name == "branch")
HOST = next(key for key in KEYS if key.name == "host")
# the keys added since the words were frozen: roles, tools, branches, hosts
ADDED = (ROLE.prefix, TOOL.prefix, BRANCH.prefix, HOST.prefix)


def without_roles(words: str) -> str:
    """The words of a filter_tokens text but those of the keys added since (roles, tools)."""
    return " ".join(word for word in words.split() if not word.startswith(ADDED))


def roles_of(words: str) -> list[str]:
    return [ROLE.decode(word[1:]) for word in words.split() if word.startswith(ROLE.prefix)]


def test_the_sample_archive_stores_the_words_it_stored_before(tmp_path):
    frozen = json.loads(FROZEN.read_text(encoding="utf-8"))
    stored = sample_archive_words(tmp_path)
    for table in ("documents", "messages"):
        assert set(frozen[table]) <= set(stored[table]), table  # every document and message is still there
        assert {key: without_roles(stored[table][key]) for key in frozen[table]} == frozen[table], table
    assert len(frozen["documents"]) == 68 and len(frozen["messages"]) == 46
    # and role words: a workspace document's is document, a message's its own, a session's
    # those of its messages that are searched (with text)
    db = sqlite_utils.Database(archive_path(tmp_path / "workspace"))
    searched: dict[str, list[str]] = {}
    for key, role, text, calls in db.execute(
        "select d.key, m.role, m.text, m.tool_calls from messages m join documents d on d.id = m.document_id "
        "order by d.key, m.role"
    ):
        if stored_searched_text(text, calls).strip() and role not in searched.get(key, []):
            searched.setdefault(key, []).append(role)  # (its text, or its calls' commands and files)
    assert {key: roles_of(words) for key, words in stored["documents"].items()} == {
        key: searched.get(key, []) if key.startswith("log:") else ["document"] for key in stored["documents"]
    }
    assert searched and all(roles for roles in searched.values())
    roles = {
        f"{key} #{seq}": role
        for key, seq, role in db.execute(
            "select d.key, m.seq, m.role from messages m join documents d on d.id = m.document_id"
        )
    }
    assert {key: roles_of(words) for key, words in stored["messages"].items()} == {
        key: [roles[key]] for key in stored["messages"]
    }
    # (a tool message's text is empty: its output is kept apart, and not searched; it is searched by
    # the files its calls touched, as aider's /add and edits are told)
    assert {role for words in stored["messages"].values() for role in roles_of(words)} == {
        "user",
        "assistant",
        "system",
        "tool",
    }


# Facts that the samples leave out (a product beside tags, a session past midnight, a root
# project, models and files named twice), with the words indexing wrote for them before.
EXAMPLES = [
    (
        {
            "kind": "record",
            "type": "bug",
            "month": "2024-05",
            "day": "2024-05-17",
            "product_id": 7,
            "tags": ["python", "日本"],
        },
        "y2024 m202405 d20240517 krecord krecordy2024 krecordm202405 krecordd20240517 t627567 t627567y2024 "
        "t627567m202405 t627567d20240517 krecordt627567 krecordt627567y2024 krecordt627567m202405 "
        "krecordt627567d20240517 p7 g707974686f6e ge697a5e69cac",
    ),
    (
        {"kind": "memory", "type": None, "month": "2023-01", "day": None, "product_id": None, "tags": ["a b"]},
        "y2023 m202301 kmemory kmemoryy2023 kmemorym202301 g612062",
    ),
    ({"kind": "note", "month": None, "day": None, "product_id": -3}, "knote p-3"),
    (
        {
            "kind": "conversation",
            "type": "claude-code",
            "month": "2025-11",
            "day": "2025-11-24",
            "agent": "Claude-Code",
            "project": "/home/dev/src/app/",
            "models": ["m-1", "m-1", "m-2"],
            "files": ["src/a.py", "b/a.py", "src/a.py"],
            "more_days": ["2025-11-25", "2025-11-26"],
            "tags": [],
        },
        "y2025 m202511 d20251124 kconversation kconversationy2025 kconversationm202511 kconversationd20251124 "
        "t636c617564652d636f6465 t636c617564652d636f6465y2025 t636c617564652d636f6465m202511 "
        "t636c617564652d636f6465d20251124 kconversationt636c617564652d636f6465 "
        "kconversationt636c617564652d636f6465y2025 kconversationt636c617564652d636f6465m202511 "
        "kconversationt636c617564652d636f6465d20251124 a636c617564652d636f6465 j2f686f6d652f6465762f7372632f617070 "
        "j617070 o6d2d31 o6d2d32 f7372632f612e7079 f612e7079 f622f612e7079 f612e7079 d20251125 "
        "kconversationd20251125 t636c617564652d636f6465d20251125 kconversationt636c617564652d636f6465d20251125 "
        "d20251126 kconversationd20251126 t636c617564652d636f6465d20251126 "
        "kconversationt636c617564652d636f6465d20251126",
    ),
    (
        {
            "kind": "conversation",
            "type": "codex",
            "month": "2025-07",
            "day": "2025-07-02",
            "agent": "codex",
            "project": "/",
            "models": ["gpt-5"],
            "dated_names": True,
        },
        "y2025 m202507 d20250702 kconversation kconversationy2025 kconversationm202507 kconversationd20250702 "
        "t636f646578 t636f646578y2025 t636f646578m202507 t636f646578d20250702 kconversationt636f646578 "
        "kconversationt636f646578y2025 kconversationt636f646578m202507 kconversationt636f646578d20250702 "
        "a636f646578 j2f o6770742d35 a636f646578y2025 a636f646578m202507 a636f646578d20250702 j2fy2025 "
        "j2fm202507 j2fd20250702",
    ),
    (
        {"kind": "conversation", "type": "plan", "month": "2025-10", "day": None, "agent": None, "project": None},
        "y2025 m202510 kconversation kconversationy2025 kconversationm202510 t706c616e t706c616ey2025 "
        "t706c616em202510 kconversationt706c616e kconversationt706c616ey2025 kconversationt706c616em202510 "
        "a776f726b7370616365",
    ),
]


@pytest.mark.parametrize(("facts", "expected"), EXAMPLES)
def test_indexing_writes_the_words_it_wrote_before(facts, expected):
    written = filter_tokens(facts)
    assert without_roles(written) == expected
    assert roles_of(written) == ["document"]  # (none of them names its role: a workspace document's)
    assert roles_of(filter_tokens({**facts, "roles": ["Assistant", "user", "assistant"]})) == ["assistant", "user"]


def test_a_word_reads_back_into_its_keys_and_values():
    assert decode("krecordt627567m202405") == [("kind", "record"), ("type", "bug"), ("month", "2024-05")]
    assert decode("kreportt74") == [("kind", "report"), ("type", "t")]  # a kind ending in t, then a type
    assert decode("a636f646578d20250702") == [("agent", "codex"), ("day", "2025-07-02")]
    assert decode("j2f") == [("project", "/")]
    assert decode("p-3") == [("product_id", "-3")]
    assert decode("y2024") == [("year", "2024")]
    assert decode("G707974686F6E") == [("tag", "python")]  # the FTS engine folds case, and so does decode
    assert encode(decode("krecordt627567m202405")) == "krecordt627567m202405"
    for word in ("", "x", "k", "kfoo", "t", "g6", "gff", "y123", "o6d2d31d2025", "p", "g612062y2024"):
        with pytest.raises(ValueError, match="not a filter word"):
            decode(word)


def test_every_key_has_its_own_prefix_and_a_filter():
    prefixes = [key.prefix for key in vocabulary.ALL_KEYS]
    assert len(prefixes) == len(set(prefixes)) and all(len(prefix) == 1 for prefix in prefixes)
    assert all(key.filter and key.fact for key in KEYS)
    assert vocabulary.NOTHING not in prefixes


def test_query_terms_that_could_find_a_filter_word_keep_to_the_text():
    kept = ["p95", "y2024", "kmemory", "knotes", "krecordt627567m202405", "a636f646578", "p95-latency", "D20240101"]
    # and what the stemmer makes a filter word of (p95s is p95 to it, kmemories kmemory)
    kept += ["p95s", "t627567s", "y2024s", "m202405s", "kmemories", "r75736572s"]
    free = ["zeppelin", "2024", "x86", "sonnet", "kilo", "memory"]
    assert [term for term in kept if not vocabulary.is_filter_word(term)] == []
    assert [term for term in free if vocabulary.is_filter_word(term)] == []
    assert terms.fts_query("p95 zeppelin") == '{title body} : "p95" "zeppelin"'
    assert terms.fts_query("y2024", "all", "text") == '{text} : "y2024"'


def test_a_search_asks_for_the_words_indexing_wrote():
    found = expressions(
        {"entities": ["bug"], "types": ["bug"], "tags": ["python", "日本"], "match_all": True, "agents": ["Codex"]},
        ["m202405"],
    )
    assert found.documents == "(krecordt627567m202405) AND (g707974686f6e AND ge697a5e69cac) AND (a636f646578)"
    assert found.messages == "(x)"  # no message has tags
    assert found.session is None
    messages = expressions({"agents": ["codex"], "projects": ["/srv/app/"], "files": ["a.py"]}, ["d20250702"])
    assert messages.messages == "(a636f646578d20250702) AND (j2f7372762f617070)"
    assert messages.session == "(f612e7079)"
    assert expressions({}, []).documents == "(x)"  # a period without a day: nothing
    assert expressions({}) == (None, None, None, None)
    # roles: a message's own, a session's those of its messages; a document's own text as a hit
    # (by words or meaning) is a workspace document's (document), or a session's user and
    # assistant text, only where both roles are asked for
    roles = expressions({"roles": ["user", "Document"], "agents": ["codex"]})
    assert roles.documents == "(a636f646578) AND (r75736572 OR r646f63756d656e74)"
    assert roles.messages == "(a636f646578) AND (r75736572 OR r646f63756d656e74)"
    assert roles.whole == "(a636f646578) AND (r646f63756d656e74)"
    both = expressions({"roles": ["assistant", "user"]})
    assert both.whole == "(r75736572 OR r617373697374616e74)"
    assert expressions({"roles": ["tool"]}).whole == "(x)"
    assert expressions({"agents": ["codex"]}).whole is None


# --- properties ---------------------------------------------------------------------------------

CHARACTERS = st.one_of(st.characters(exclude_categories=()), st.characters(categories=["Cs"]))
TEXTS = st.one_of(
    st.text(CHARACTERS),
    st.text(CHARACTERS, min_size=1, max_size=4).map(lambda text: text * 3000),  # very long
    st.just(""),
)
FOLDERS = st.lists(st.text(st.characters(exclude_characters="/", exclude_categories=()), max_size=8), max_size=60)
PATHS = st.one_of(
    TEXTS,
    st.tuples(st.sampled_from(["", "/", "~/"]), FOLDERS, st.sampled_from(["", "/", "//"])).map(
        lambda parts: parts[0] + "/".join(parts[1]) + parts[2]
    ),
)
# a period's end is followed by its next day
FIRST, LAST = dt.date(1, 1, 1), dt.date(9998, 12, 31)
VALUES = {
    "product_id": st.one_of(st.integers(-(2**63), 2**63 - 1), TEXTS),
    "tag": TEXTS,
    "agent": TEXTS,
    "project": PATHS,
    "model": TEXTS,
    "file": PATHS,
    "tool": st.one_of(st.sampled_from(["Bash", "Edit", "read_file", "developer__shell"]), TEXTS),
    "role": st.one_of(st.sampled_from(["user", "assistant", "tool", "system", "document"]), TEXTS),
    "branch": st.one_of(st.sampled_from(["main", "feature/login", "release-1.2"]), TEXTS),
    "host": st.one_of(st.sampled_from(["laptop", "build-1.example.org", "[::1]"]), TEXTS),
}


def test_every_key_is_in_the_properties():
    assert set(VALUES) == {key.name for key in KEYS}


def words_in(expression: str | None) -> list[str]:
    return [word for word in re.findall(r"[^\s()]+", expression or "") if word not in ("AND", "OR")]


@pytest.mark.parametrize("key", KEYS, ids=lambda key: key.name)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_value_of_a_key_round_trips_and_a_search_finds_it(key, data):
    value = data.draw(VALUES[key.name])
    kind = "conversation" if key.kinds is not None else data.draw(st.sampled_from(KINDS))
    day = data.draw(st.dates(FIRST, LAST)).isoformat()
    facts: dict[str, Any] = {"kind": kind, "month": day[:7], "day": day, key.fact: [value] if key.many else value}
    written = key.written(facts)
    assert " ".join(written) in " ".join(words(facts))
    missing = value is None or value == ""
    normalised = key.default if missing else key.normalise(value)
    if missing and key.default is None:
        assert written == []
    else:
        names = [name for name in dict.fromkeys(key.names(normalised)) if name]
        assert [decode(word) for word in written] == [[(key.name, name)] for name in names]
        assert [encode(decode(word)) for word in written] == written
    # what a search for the value asks for is a word indexing wrote
    found = expressions({key.filter: [value]})
    if missing:
        assert found == (None, None, None, None)
        return
    (asked,) = words_in(found.documents if key.messages != "session" else found.session)
    assert asked in written
    message = words({**facts, "dated_names": True})
    if key.messages == "own":
        assert words_in(found.messages) == [asked] and asked in message
        dated = expressions({key.filter: [value]}, [f"d{day.replace('-', '')}"]).messages
        assert all(word in message for word in words_in(dated))
    elif key.messages == "none":
        assert found.messages == "(x)"


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(KINDS),
    type_=TEXTS,
    date=st.dates(FIRST, LAST),
    precision=st.sampled_from(["month", "day"]),
    more_days=st.lists(st.dates(FIRST, LAST), max_size=3),
)
def test_kind_type_and_date_round_trip_and_a_period_finds_them(kind, type_, date, precision, more_days):
    facts = {
        "kind": kind,
        "type": type_,
        "month": date.isoformat()[:7],
        "day": date.isoformat() if precision == "day" else None,
        "more_days": [day.isoformat() for day in more_days],
    }
    written = words(facts)
    expected = {("kind", kind), ("year", date.isoformat()[:4]), ("month", date.isoformat()[:7])}
    expected |= {("type", type_)} if type_ else set()
    expected |= {("day", day) for day in [facts["day"], *facts["more_days"]] if day}
    expected |= {("agent", "workspace")} if kind == "conversation" else set()  # the workspace's own
    expected |= {("role", "document")}  # a workspace document's
    assert {part for word in written for part in decode(word)} == expected
    assert [encode(decode(word)) for word in written] == written
    # a search for its kind (or as a record, its type) and type, over a period that holds its
    # whole date, asks for one of its words
    periods = [(dt.date(date.year, 1, 1), dt.date(date.year, 12, 31))]
    month_end = (date.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)
    periods.append((date.replace(day=1), month_end))
    if precision == "day":
        periods.append((date, date))
    filters: dict[str, Any] = {"entities": [kind], "types": [type_]}
    if kind == vocabulary.RECORD and type_ and type_.lower() == type_ and type_ not in KINDS:
        filters = {"entities": [type_]}
    for start, end in periods:
        start_at = dt.datetime.combine(start, dt.time(0, 0, 0), dt.UTC)
        end_at = dt.datetime.combine(end, dt.time(23, 59, 59), dt.UTC)
        days, _ = dates.period_words(start_at, end_at)
        asked = words_in(expressions(filters, days).documents)
        assert set(asked) & set(written), (start, end)


@settings(max_examples=100, deadline=None)
@given(agent=TEXTS, project=PATHS, models=st.lists(TEXTS, max_size=3), day=st.dates(FIRST, LAST))
def test_a_message_is_found_by_its_agent_and_project_on_its_day(agent, project, models, day):
    facts = {
        "kind": "conversation",
        "type": agent,
        "month": day.isoformat()[:7],
        "day": day.isoformat(),
        "agent": agent,
        "project": project,
        "models": models,
        "dated_names": True,
    }
    written = words(facts)
    assert [encode(decode(word)) for word in written] == written
    days, _ = dates.period_words(
        dt.datetime.combine(day, dt.time(0, 0, 0), dt.UTC), dt.datetime.combine(day, dt.time(23, 59, 59), dt.UTC)
    )
    filters = {"agents": [agent], "projects": [project], "models": models}
    for group in (expressions(filters, days).messages or "").split(" AND "):
        assert set(words_in(group)) & set(written), group


def test_a_query_word_the_stemmer_makes_a_filter_word_finds_only_text(tmp_path):
    """p95s is p95 to the stemmer, kmemories kmemory, y2024s y2024: words of the text, never the filters."""
    workspace = tmp_path / "ws"
    (workspace / "records").mkdir(parents=True)
    (workspace / "memories").mkdir()
    (workspace / "records" / "bugs.jsonl").write_text(
        json.dumps(
            {
                "entity_type": "bug",
                "entity_id": 1,
                "title": "Crash",
                "body": "it fails",
                "product_id": 95,
                "timestamp": "2024-05-17T10:00:00Z",
            }
        )
        + "\n",
        encoding="utf-8",
    )
    (workspace / "memories" / "m.jsonl").write_text(
        json.dumps({"content": "remember the p95s of the proxy", "created_at": "2024-05-18"}) + "\n", encoding="utf-8"
    )
    index_workspace(workspace)
    from archivist.queries.runner import Archive

    with Archive.for_workspace(workspace) as archive:
        for query, expected in (("p95s", ["memory"]), ("kmemories", []), ("y2024s", []), ("t627567s", [])):
            found = archive.search({"query": query, "mode": "keyword", "output": "full"})
            assert [hit["kind"] for hit in found["results"]] == expected, query
