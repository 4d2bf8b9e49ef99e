"""The filter vocabulary: the words of the FTS ``filter_tokens`` column that filters match."""

from __future__ import annotations

from typing import Any


def filter_tokens(document: dict[str, Any]) -> str:
    """Words for the FTS ``filter_tokens`` column, so a MATCH can filter as it searches.

    Every combination of a prefix (none, ``k<kind>``, ``t<hex of type>``, both) and
    a date (none, ``y<YYYY>``, ``m<YYYYMM>``, ``d<YYYYMMDD>`` for dates known to
    the day) is one word, e.g. ``krecordt627567m202405`` for a bug of May 2024;
    then ``p<product_id>`` and ``g<hex of tag>``. A filter on kind, type and date
    is then one rare word instead of three common ones, which matters twice: the
    FTS engine intersects fewer and shorter lists, and BM25 counts the documents
    of every word in a query, filters included. Hex keeps any type or tag a single
    exact word; SQL builds the same with ``hex()``. A message of an agent log
    (``dated_names``) also has its agent's and project's words with each of its dates.
    """
    kind = f"k{document['kind']}"
    prefixes = [kind]
    if document.get("type"):
        typed = "t" + str(document["type"]).encode("utf-8").hex()
        prefixes += [typed, kind + typed]
    dates_ = [""]
    if document.get("month"):
        dates_ += ["y" + document["month"][:4], "m" + document["month"].replace("-", "")]
    if document.get("day"):
        dates_.append("d" + document["day"].replace("-", ""))
    tokens = [prefix + date for prefix in ["", *prefixes] for date in dates_ if prefix + date]
    if document.get("product_id") is not None:
        tokens.append(f"p{document['product_id']}")
    tokens.extend("g" + tag.encode("utf-8").hex() for tag in document.get("tags") or [])
    if document["kind"] == "conversation":
        # a conversation's agent (an agent-log kind, or "workspace" for the workspace's own),
        # project (its path and its last folder's name), models and the files it touched
        tokens.append("a" + _hex(str(document.get("agent") or "workspace").lower()))
        if project := document.get("project"):
            project = str(project).rstrip("/") or "/"
            tokens.extend("j" + _hex(name) for name in dict.fromkeys([project, project.rsplit("/", 1)[-1]]) if name)
        tokens.extend("o" + _hex(str(model)) for model in dict.fromkeys(document.get("models") or []))
        for file in dict.fromkeys(document.get("files") or []):
            tokens.extend("f" + _hex(name) for name in dict.fromkeys([str(file), str(file).rsplit("/", 1)[-1]]) if name)
        if document.get("dated_names") and document.get("day"):
            # a message: its agent's and project's words of its day, month and year too
            # (a<hex>m202507), so that an agent or project filter with a date is one short list
            day = str(document["day"])
            named = [token for token in tokens if token[0] in "aj"]
            tokens.extend(
                name + date
                for name in named
                for date in (f"y{day[:4]}", f"m{day[:7]}".replace("-", ""), "d" + day.replace("-", ""))
            )
    for day in document.get("more_days") or []:  # a session that runs past midnight: each of its days
        tokens.extend(prefix + "d" + day.replace("-", "") for prefix in ["", *prefixes])
    return " ".join(tokens)


def _hex(text: str) -> str:
    return text.encode("utf-8", "surrogatepass").hex()
