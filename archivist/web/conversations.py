"""Conversations read from agent logs, as their document page shows them: the session's
header, its messages a page at a time with their folds, and the session it belongs to."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from archivist.archive.schema import MESSAGE_IDS
from archivist.errors import ArchivistError
from archivist.jsonvalues import json_list
from archivist.queries import diffs
from archivist.web.page_queries import QueryFailed, canned
from archivist.web.rendering import render_markdown, shorten
from archivist.web.search_navigation import page_links, project_name
from archivist.web.urls import document_url, file_url
from archivist.workspace import DATABASE_NAME

if TYPE_CHECKING:
    from datasette.app import Datasette


MESSAGES_PER_PAGE = 200  # a session of 5,000 messages is read and shown a page at a time
MESSAGE_CHARS = 20_000  # a message's text (or thinking) rendered at most; its row has the rest
TOOL_OUTPUT_CHARS = 4_000  # raw tool output shown at most
INPUT_CHARS = 4_000  # a tool call's input (or a sub-agent's prompt) shown at most
SUBAGENT_CALLS = ("task", "agent")  # the tools that start a sub-agent with a prompt
SUMMARY_COMMAND_CHARS = 120  # a command in a tool call's summary line (the fold has it whole)
SUMMARY_FILES = 4  # files named in a tool call's summary line (the fold lists them all)
ROLES = ("user", "assistant", "tool", "system")
_NUMBER_RE = re.compile(r"[0-9]{1,9}")


async def session_messages(datasette: Datasette, document_id: int, offset: int, limit: int) -> list[dict[str, Any]]:
    """Messages ``offset`` to ``offset + limit - 1`` of a session, in order, thinking and tool output included."""
    return await canned(
        datasette,
        "get_conversation",
        {"document": str(document_id), "offset": str(offset), "limit": str(limit), "include": "thinking,tool_output"},
    )


def session_of(document: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any] | None:
    """What an agent-log session's header shows, or None for any other document (a markdown conversation)."""
    count = extra.get("messages")
    if document["kind"] != "conversation" or not extra.get("agent") or not isinstance(count, int) or count < 1:
        return None
    project = extra.get("project") or ""
    return {
        "agent": extra["agent"],
        "project": project,
        "project_name": project_name(project),
        "models": [model for model in extra.get("models") or [] if model],
        "branch": extra.get("branch"),
        "host": extra.get("host"),  # synced from another machine (archivist sync); None: this one
        "started": extra.get("started"),
        "last": extra.get("last"),
        "period": period(extra.get("started"), extra.get("last")),
        "messages": count,
        "parent_key": extra.get("parent"),
        "read_from": [str(path) for path in extra.get("files") or []],
        "usage": usage_text(extra.get("usage")),
    }


USAGE_NAMES = (("input", "in"), ("output", "out"), ("cache_write", "cache write"), ("cache_read", "cache read"))


def usage_text(usage: Any) -> str:
    """Token usage as a line: ``1,204 in · 310 out · 18,022 cache read · $0.0142``; "" for none."""
    if not isinstance(usage, dict):
        return ""
    parts = [f"{count:,} {name}" for key, name in USAGE_NAMES if isinstance(count := usage.get(key), int) and count > 0]
    cost = usage.get("cost")
    if isinstance(cost, int | float) and cost > 0:
        parts.append(f"${cost:,.4f}")
    return " · ".join(parts)


def money(value: Any) -> str:
    """A cost in US dollars as the page shows it: ``$0.0142``; "" for none (or not a number)."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not value > 0:
        return ""
    return f"${value:,.4f}"


def message_usage_text(usage: Any, price: Any) -> str:
    """A response's tokens and cost as its line shows them: ``1,204 in · 310 out · $0.0142
    priced``, the cost its log states (Aider's) labelled apart; "" for none."""
    tokens = usage_text({**usage, "cost": None}) if isinstance(usage, dict) else ""
    costs = cost_text(price, usage.get("cost") if isinstance(usage, dict) else None)
    return " · ".join(part for part in (tokens, costs) if part)


def cost_text(price: Any, stated: Any) -> str:
    """What something cost: ``$0.0500 priced · $0.0412 stated by the log``; "" where neither is known."""
    parts = [
        f"{money(price)} priced" if money(price) else "",
        f"{money(stated)} stated by the log" if money(stated) else "",
    ]
    return " · ".join(part for part in parts if part)


def attachment_text(item: Any) -> str:
    """An attachment as the page names it: ``image/png shot.png (12 KB)``."""
    if not isinstance(item, dict):
        return ""
    size = item.get("size")
    shown = (
        f"({size / 1024:,.0f} KB)"
        if isinstance(size, int) and size >= 1024
        else f"({size} bytes)"
        if isinstance(size, int)
        else ""
    )
    return " ".join(str(part) for part in (item.get("type"), item.get("name"), shown) if part)


def moment(timestamp: str | None) -> tuple[str, str]:
    """An ISO timestamp as (day, time of day): ``2025-11-23T04:53:42.362Z`` → (2025-11-23, 04:53:42)."""
    found = re.match(r"(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d(?::\d\d)?)", timestamp or "")
    return (found[1], found[2]) if found else (timestamp or "", "")


def period(started: str | None, last: str | None) -> str:
    """A session's span: ``2025-11-23 04:53:42 – 06:10:05 UTC``; the day again only when it changes."""
    (day, time), (last_day, last_time) = moment(started), moment(last)
    if not day:
        return ""
    start = f"{day} {time}".strip()
    if not last_day or (last_day, last_time) == (day, time):
        return f"{start} UTC" if time else start
    end = last_time if last_day == day else f"{last_day} {last_time}".strip()
    return f"{start} – {end} UTC" if time else f"{start} – {end}"


def session_page_of(args: Any, total: int) -> tuple[int, int | None]:
    """The page to show (from 1) and the message named by ``?m=``; ``?m=`` picks the page holding it."""
    pages = max(1, -(-total // MESSAGES_PER_PAGE))
    wanted, page = args.get("m"), args.get("page")
    if wanted is not None and wanted.strip() != "":
        if not _NUMBER_RE.fullmatch(wanted.strip()) or int(wanted) >= total:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"There is no message {wanted[:40]!r} in this conversation",
                f"m names a message by its number: 0 to {total - 1} here.",
                "Open the conversation without ?m= to read it from the start.",
            )
        return int(wanted) // MESSAGES_PER_PAGE + 1, int(wanted)
    if page is not None and page.strip() != "":
        if not _NUMBER_RE.fullmatch(page.strip()) or not 1 <= int(page) <= pages:
            raise ArchivistError(
                "INVALID_PARAMETER",
                f"There is no page {page[:40]!r} of this conversation",
                f"Its {total:,} messages are shown {MESSAGES_PER_PAGE} a page: pages 1 to {pages}.",
                "Open the conversation without ?page= to read it from the start.",
            )
        return int(page), None
    return 1, None


def shown(text: str, limit: int) -> tuple[str, str | None]:
    """A text cut to ``limit`` characters, and a note saying how much is shown, when it was cut."""
    cut, shortened = shorten(text or "", limit)
    if shortened is None:
        return cut, None
    return cut, f"shown: the first {shortened['shown']:,} of {shortened['total']:,} characters"


def tool_call_view(call: Any) -> dict[str, Any] | None:
    """One tool call as its fold shows it: name, its files and commands in full and in short,
    its input (a sub-agent's prompt apart), and each change it made to a file as a diff."""
    if not isinstance(call, dict):
        return None
    files = [str(file) for file in call.get("files") or [] if file]
    commands = [str(command) for command in call.get("commands") or [] if command]
    short_commands = []
    for command in commands:
        first = command.strip().splitlines()[0] if command.strip() else command
        short, _ = shorten(first, SUMMARY_COMMAND_CHARS)
        short_commands.append(short + ("…" if short != command.strip() else ""))
    name = str(call.get("name") or "tool")
    prompt, rest = call_prompt(name, call.get("input"))
    input_text, input_cut = shown(rest, INPUT_CHARS)
    prompt_text, prompt_cut = shown(prompt, INPUT_CHARS)
    return {
        "name": name,
        "files": files,
        "commands": commands,
        "summary_commands": short_commands,
        "summary_files": files[:SUMMARY_FILES],
        "more_files": max(0, len(files) - SUMMARY_FILES),
        "agent": call["agent"] if isinstance(call.get("agent"), str) and call["agent"] else None,
        "input": input_text,
        "input_chars": len(rest),
        "input_cut": input_cut,
        "prompt": prompt_text,
        "prompt_cut": prompt_cut,
        "edits": [diff_view(edit) for edit in diffs.edits_of(call)],
    }


def call_prompt(name: str, given: Any) -> tuple[str, str]:
    """A call's input as (the prompt it gave a sub-agent, the rest as JSON text): a Task or Agent
    call's ``prompt`` apart; ("", the input) for any other call, or an input that is not JSON."""
    text = given if isinstance(given, str) else ""
    if name.lower() not in SUBAGENT_CALLS or not text.startswith("{"):
        return "", text
    try:
        found = json.loads(text)
    except ValueError:
        return "", text
    if not isinstance(found, dict) or not isinstance(found.get("prompt"), str):
        return "", text
    prompt = found.pop("prompt")
    return prompt, json.dumps(found, ensure_ascii=False, separators=(",", ":")) if found else ""


def diff_view(edit: dict[str, Any], limit: int = diffs.DIFF_LINES) -> dict[str, Any]:
    """An edit as the page shows it: its file, its diff's lines (each with its kind, for its
    colour, each cut as ``diffs.cut_line`` cuts it), and a note saying how much is shown, when it was cut."""
    lines = diffs.diff_lines(edit)
    shown_lines = [{"kind": diffs.line_kind(line), "text": diffs.cut_line(line)} for line in lines[:limit]]
    cut = f"shown: the first {limit:,} of {len(lines):,} lines" if len(lines) > limit else None
    return {"file": str(edit.get("file") or ""), "lines": shown_lines, "cut": cut}


def link_files(datasette: Datasette, messages: list[dict[str, Any]]) -> None:
    """Each file a page's tool calls name or change, with the link to its history (``/file``)."""
    for call in (call for message in messages for call in message["tool_calls"]):
        named = [*call["files"], *(edit["file"] for edit in call["edits"])]
        call["file_links"] = {path: file_url(datasette, path) for path in named}


def message_view(datasette: Datasette, document_id: int, row: dict[str, Any], previous_day: str) -> dict[str, Any]:
    """One message as the page shows it: role, time, model, text, and its folds."""
    seq = int(row["seq"])
    role = str(row.get("role") or "")
    text, text_cut = shown(row.get("text") or "", MESSAGE_CHARS)
    thinking, thinking_cut = shown(row.get("thinking") or "", MESSAGE_CHARS)
    output, output_cut = shown(row.get("tool_output") or "", TOOL_OUTPUT_CHARS)
    calls = json_list(row.get("tool_calls"))
    usage = row.get("usage")
    try:
        usage = json.loads(usage) if isinstance(usage, str) else usage
    except ValueError:
        usage = None
    day, time = moment(row.get("timestamp"))
    return {
        "seq": seq,
        "role": role,
        "role_class": role if role in ROLES else "other",
        "timestamp": row.get("timestamp") or "",
        "day": day if day != previous_day else "",
        "time": time or day,
        "model": row.get("model") or "",
        "text_html": render_markdown(text) if text.strip() else "",
        "text_cut": text_cut,
        "thinking_html": render_markdown(thinking) if thinking.strip() else "",
        "thinking_chars": len(row.get("thinking") or ""),
        "thinking_cut": thinking_cut,
        "tool_calls": [view for call in calls or [] if (view := tool_call_view(call))],
        "output": output if output.strip() else "",
        "output_chars": len(row.get("tool_output") or ""),
        "output_cut": output_cut,
        "usage": message_usage_text(usage, row.get("price")),
        "attachments": [text for item in json_list(row.get("attachments")) if (text := attachment_text(item))],
        "href": message_url(datasette, document_id, seq),
        "row_href": datasette.urls.row(DATABASE_NAME, "messages", str(int(document_id) * MESSAGE_IDS + int(seq))),
    }


def message_url(datasette: Datasette, document_id: Any, seq: int) -> str:
    """A message's own link: ``?m=`` picks the page holding it, the fragment scrolls to it."""
    return f"{document_url(datasette, document_id)}?m={seq}#m{seq}"


def session_page_url(datasette: Datasette, document_id: Any, page: int) -> str:
    return document_url(datasette, document_id) + (f"?page={page}" if page > 1 else "")


async def conversation(
    datasette: Datasette, request: Any, document: dict[str, Any], session: dict[str, Any]
) -> dict[str, Any]:
    """A page of a session's messages, its page links, and the message asked for."""
    total = session["messages"]
    page, selected = session_page_of(request.args, total)
    pages_count = max(1, -(-total // MESSAGES_PER_PAGE))
    offset = (page - 1) * MESSAGES_PER_PAGE
    rows = await session_messages(datasette, document["id"], offset, MESSAGES_PER_PAGE)
    messages, day = [], ""
    for row in rows:
        view = message_view(datasette, document["id"], row, day)
        day = moment(row.get("timestamp"))[0] or day
        view["selected"] = view["seq"] == selected
        messages.append(view)
    await _link_agents(datasette, session["agent"], messages)
    link_files(datasette, messages)
    links = page_links(page, pages_count, lambda number: session_page_url(datasette, document["id"], number))
    # A link by fragment alone (/document/<id>#m300, as search hits give) reaches page 1:
    # each later message gets an anchor here that, when it is the target, links to its page.
    later = range(offset + len(rows), total) if not request.args and pages_count > 1 else range(0)
    first = rows[0] if rows else {}
    return {
        "messages": messages,
        "cost": cost_text(first.get("session_price"), first.get("session_stated_cost")),
        "subagents": subagent_tree(datasette, document["id"], first.get("subagents")),
        "page": page,
        "pages": pages_count,
        "first": offset,
        "last": offset + len(rows) - 1,
        "page_links": links if pages_count > 1 else [],
        "previous_url": session_page_url(datasette, document["id"], page - 1) if page > 1 else None,
        "next_url": session_page_url(datasette, document["id"], page + 1) if page < pages_count else None,
        "later": later,
        "base_url": document_url(datasette, document["id"]),
    }


def subagent_tree(datasette: Datasette, document_id: int, found: Any) -> list[dict[str, Any]]:
    """A session's sub-agent sessions (get_conversation's ``subagents``, depth first) as a tree:
    each with its link, title, messages, tokens and cost, and the sub-agents it started (``children``)."""
    nodes: dict[Any, dict[str, Any]] = {document_id: {"children": []}}
    for item in json_list(found):
        if not isinstance(item, dict) or not isinstance(item.get("id"), int) or item["id"] in nodes:
            continue  # (a session reached again: each is shown once)
        if item.get("parent") not in nodes:
            continue
        tokens = item.get("tokens")
        node = {
            "id": item["id"],
            "title": str(item.get("title") or f"session {item['id']}"),
            "href": document_url(datasette, item["id"]),
            "messages": item["messages"] if isinstance(item.get("messages"), int) else 0,
            "tokens": tokens if isinstance(tokens, int) and tokens > 0 else 0,
            "cost": cost_text(item.get("price"), item.get("stated_cost")),
            "children": [],
        }
        nodes[item["parent"]]["children"].append(node)
        nodes[item["id"]] = node
    return list(nodes[document_id]["children"])


async def _link_agents(datasette: Datasette, agent: str, messages: list[dict[str, Any]]) -> None:
    """Each tool call of the page that started a sub-agent: that session's title and link
    (``agent_session``), or only its key when it is not archived."""
    for call in (call for message in messages for call in message["tool_calls"] if call["agent"]):
        call["agent_session"] = await _session_by_key(datasette, agent, call["agent"])


async def _session_by_key(datasette: Datasette, agent: str, key: str) -> dict[str, Any]:
    try:
        found = await canned(datasette, "find_document", {"document": f"{agent}:{key}"})
    except QueryFailed:
        found = []
    if not found:
        return {"key": key, "title": None, "href": None}
    return {"key": key, "title": found[0]["title"], "href": document_url(datasette, found[0]["id"])}


async def parent_session(datasette: Datasette, session: dict[str, Any]) -> dict[str, Any] | None:
    """The session a sub-agent belongs to: its title and link, or only its key when it is not archived."""
    key = session.get("parent_key")
    return await _session_by_key(datasette, session["agent"], key) if key else None
