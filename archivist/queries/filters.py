"""The unified search's list filters, each one object: its parameter, the key of the index that stores
it, how the SQL reads it, its chip, its facet and example values.

Every part of the search that names a filter is made from ``FILTERS``: the declaration's parameters
(``search_params``), the SQL's inputs, the spec of ``archivist_search_words`` and the echo of the
filters (``sql_part``, included by ``catalog`` where ``search.sql`` says ``-- include: filters.<part>``),
the facets counted (``FACETS``, ``facet_counts``), the search page's chips and facet groups
(``web.search_navigation``), and the fuzzer's and the tests' values (``examples``). The time filter
(``start_date``, ``end_date``) and ``match_all`` are the SQL's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from archivist import vocabulary
from archivist.queries import params, rules
from archivist.queries.params import Param, Rule

LOG = "case when d.source like 'log:%' then d.extra ->> '{field}' end"  # an agent log's fact of a conversation


@dataclass(frozen=True)
class Facet:
    """The counts of a filter's values over a search's first 200 results, and the sidebar group that narrows by them."""

    name: str  # its key in the response's facets
    label: str  # the sidebar group's heading
    value: str  # SQL of the document ``d`` that holds its value (a JSON array where ``many``)
    many: bool = False  # each value of the array counts
    every_value: bool = False  # every value listed; else the 50 most frequent
    # how the sidebar shows it: one value at a time, tags (another narrows: match_all), products by
    # their titles, paths by their last folder (the whole path as the title)
    shown: Literal["single", "tags", "products", "folders"] = "single"
    group: str = ""  # the sidebar group's name, where it is not ``name``

    @property
    def sidebar(self) -> str:
        return self.group or self.name


@dataclass(frozen=True)
class Filter:
    """One list filter of the unified search."""

    param: Param  # its parameter, as every surface declares it
    key: vocabulary.Key  # the fact the index stores for it (``filter_tokens`` words)
    chip: str  # the chip that removes a value of it on the search page: "<chip>: <value>"
    facet: Facet | None  # its facet, where the response counts one
    examples: tuple[str, ...]  # values to try it with: found, unknown and odd ones
    parse: Literal["", "lower", "tag"] = ""  # how ``archivist_list`` reads the parameter

    @property
    def name(self) -> str:
        return self.param.name


def _listed(
    name: str, description: str, flags: tuple[str, ...], metavar: str, rule: Rule = rules.text_list, brief: str = ""
) -> Param:
    """One of the search's lists: an option of ``archivist search`` and a field the search page keeps."""
    return Param(name, rule, description, many=True, flags=flags, metavar=metavar, form="hidden", brief=brief)


def _key(name: str) -> vocabulary.Key:
    return next(key for key in vocabulary.ALL_KEYS if key.name == name)


FILTERS = (
    Filter(
        _listed(
            "entities",
            f"Only these kinds ({', '.join(rules.KINDS)}) or record entity types ({', '.join(rules.ENTITY_TYPES)}, ...).",
            ("--kind", "--kinds", "--entities"),
            "KIND",
            brief="Only these kinds or record entity types.",
        ),
        vocabulary.KIND,
        "kind",
        Facet("kind", "Kind", "d.kind", every_value=True),
        ("conversation", "report", "memory", "record", "note", "product", "feature", "test", "bug", "epic"),
        parse="lower",
    ),
    Filter(
        _listed(
            "types",
            "Only these types: memory types (note, decision, task, ...), entity types, conversation types or report "
            "commands.",
            ("--type", "--types"),
            "TYPE",
            brief="Only these types or report commands.",
        ),
        vocabulary.TYPE,
        "type",
        Facet("type", "Type", "d.type", every_value=True),
        ("debug", "plan", "brainstorm", "decision", "note", "task", "k8s-cluster-health", ""),
    ),
    Filter(
        _listed(
            "tags", "Only documents with these tags: any of them, or all with match_all.", ("--tag", "--tags"), "TAG"
        ),
        _key("tag"),
        "tag",
        Facet("tags", "Tags", "d.tags", many=True, shown="tags"),
        ("kubernetes", "auth", "decision", "python"),
        parse="tag",
    ),
    Filter(
        Param(
            "product_ids",
            rules.id_list("product_ids"),
            "Only records of these products (positive whole numbers).",
            type="integer",
            brief="Only records of these products.",
            many=True,
            flags=("--product-id", "--product-ids"),
            metavar="N",
            form="hidden",
        ),
        _key("product_id"),
        "product",
        Facet("product_id", "Product", "d.product_id", shown="products", group="product"),
        ("598", "601", "1"),
    ),
    Filter(
        params.agents("conversations", ("--agent", "--agents"), "AGENT", "hidden"),
        _key("agent"),
        "agent",
        Facet("agent", "Agent", LOG.format(field="agent"), every_value=True),
        (
            "claude-code",
            "codex",
            "gemini-cli",
            "claude-export",
            "chatgpt-export",
            "aider",
            "specstory",
            "llm",
            "workspace",
            "Claude-Code",
            " codex ",
            "cursor",
            "",
        ),
        parse="lower",
    ),
    Filter(
        _listed(
            "projects",
            "Only conversations of these projects: a full path, or its last folder's name.",
            ("--project", "--projects"),
            "PROJECT",
            brief="Only these projects: full paths or last folder names.",
        ),
        _key("project"),
        "project",
        Facet("project", "Project", LOG.format(field="project"), shown="folders"),
        ("api", "/home/ana/api", "/home/dev/src/", "src", "/", ""),
    ),
    Filter(
        _listed(
            "models",
            "Only conversations that used these models.",
            ("--model", "--models"),
            "MODEL",
            brief="Only these models.",
        ),
        _key("model"),
        "model",
        Facet("model", "Model", f"coalesce({LOG.format(field='$.models')}, '[]')", many=True),
        ("claude", "gpt", "GPT-5", ""),
    ),
    Filter(
        _listed(
            "files",
            "Only conversations that touched these files: a full path, or a file name.",
            ("--file", "--files"),
            "FILE",
            brief="Only these touched files (paths or names).",
        ),
        _key("file"),
        "file",
        None,
        (  # files the sample sessions touched, by path and by name, and some they did not
            "/home/dev/src/captions-gateway/tests/test_keepalive.py",
            "test_keepalive.py",
            "charts/report-service/values.yaml",
            "values.yaml",
            "src/server/auth.ts",
            "session.ts",
            "src/proxy/resolver.py",
            "tests/",
            "*.py",
            "",
        ),
    ),
    Filter(
        _listed(
            "tools",
            "Only conversations whose tool calls used these tools, by the name their logs give them (Bash, Edit, "
            "read_file; any case).",
            ("--tool", "--tools"),
            "TOOL",
            brief="Only sessions calling these tools (Bash, Edit, ...).",
        ),
        _key("tool"),
        "tool",
        None,
        ("Bash", "read_file", "edit", "apply_patch", "BASH", "no_such_tool"),
        parse="lower",
    ),
    Filter(
        _listed(
            "roles",
            f"Only hits in these roles: {', '.join(rules.MESSAGE_ROLES)} (an agent log's hit must be a message of one "
            f"of them: a session's title, opening prompt and meaning count only with both user and assistant, and a "
            f"tool's raw output is kept apart, not searched) and {rules.DOCUMENT_ROLE} (the workspace's own documents).",
            ("--role", "--roles"),
            "ROLE",
            rules.role_list,
            brief="Only hits in messages of these roles.",
        ),
        _key("role"),
        "role",
        None,
        ("user", "assistant", "tool", "system", "document", "Assistant", " user ", "bot", ""),
        parse="lower",
    ),
    Filter(
        _listed(
            "branches",
            "Only conversations on these git branches.",
            ("--branch", "--branches"),
            "BRANCH",
            brief="Only these git branches.",
        ),
        _key("branch"),
        "branch",
        Facet("branch", "Branch", LOG.format(field="branch")),
        ("main", "master", "feature/login", "MAIN", ""),
    ),
    Filter(
        _listed(
            "hosts",
            "Only conversations synced from these machines (archivist sync --host); this machine's have none.",
            ("--host", "--hosts"),
            "HOST",
            brief="Only these synced hosts.",
        ),
        _key("host"),
        "host",
        Facet("host", "Host", LOG.format(field="host")),
        ("laptop", "build-1.example.org", "LAPTOP", "no-such-host", ""),
        parse="lower",
    ),
)

# the facets counted, in the response's order: each filter's, with the time filter's months and days after type
PERIODS = (
    Facet("month", "Month", "d.month", every_value=True),
    Facet("day", "Day", "d.day", every_value=True),
)
_OWN = tuple(f.facet for f in FILTERS if f.facet is not None)
FACETS: tuple[Facet, ...] = (*_OWN[:2], *PERIODS, *_OWN[2:])


def named(name: str) -> Filter:
    """The filter whose parameter is ``name``."""
    return next(f for f in FILTERS if f.name == name)


def _inputs() -> str:
    mode = {f.name: f", '{f.parse}'" if f.parse else "" for f in FILTERS}
    return "\n".join(f"archivist_list(:{f.name}{mode[f.name]}) as {f.name}," for f in FILTERS)


def _spec() -> str:
    return "\n".join(f"'{f.name}', json({f.name})," for f in FILTERS)


def _echo() -> str:
    return "\n".join(f"'{f.name}', json(plan.{f.name})," for f in FILTERS)


def _facet_values() -> str:
    return ",\n".join(facet.value for facet in FACETS)


def _no_facets() -> str:
    return ", ".join(f"'{facet.name}', json('{{}}')" for facet in FACETS)


SQL_PARTS = {
    "inputs": _inputs,  # each parsed, in ``inputs``
    "spec": _spec,  # passed to archivist_search_words
    "echo": _echo,  # the response's filters, as understood
    "facet_values": _facet_values,  # archivist_facets' arguments
    "no_facets": _no_facets,  # every facet, empty
}


def sql_part(name: str) -> str:
    """The part of ``search.sql`` named ``name`` (``-- include: filters.<name>``), made from ``FILTERS``."""
    return SQL_PARTS[name]()
