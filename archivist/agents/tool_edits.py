"""The changes coding agents' edit tools made to files, read from a call's arguments: a text
replaced (``oldString``/``newString``, ``old_string``/``new_string``, ``old_str``/``new_str``),
a file written whole (``content``, ``contents``, ``file_text`` of a write tool), several
replacements in one file (``edits``), a line inserted (Goose's ``insert``), or a patch in the
``*** Begin Patch`` form (``patchText``, ``patch_text``).

A call keeps its arguments as its input, less the texts its edits hold, and less a command it
keeps verbatim among its commands (``with_input``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from archivist.agents import Edit, NotJSON, ToolCall, call_input, json_value, text_edit

FILE_KEYS = ("filePath", "file_path", "filepath", "path", "absolute_path", "file")
_PAIRS = (("oldString", "newString"), ("old_string", "new_string"), ("old_str", "new_str"))
_WHOLE_KEYS = ("content", "contents", "file_text")
_PATCH_KEYS = ("patchText", "patch_text")
WRITE_TOOLS = frozenset({"write", "write_file", "create_new_file", "create_file", "create"})
_WRITE_COMMANDS = frozenset({"write", "create"})  # Goose's text_editor
_SECTIONS = ("*** Begin Patch", "*** End Patch", "*** Add File: ", "*** Update File: ", "*** Delete File: ")


def with_input(call: ToolCall, arguments: Any) -> ToolCall:
    """``call`` given its arguments (as the log gives them: an object, or a text that is not
    one): its input, the edits of an edit tool, and the files those edits changed."""
    edits, held = call_edits(call.name, arguments)
    left = list(held)
    command = arguments.get("command") if isinstance(arguments, Mapping) else None
    if isinstance(command, str) and command.strip() in call.commands:
        left.append("command")
    call.input = call_input(arguments, without=left)
    call.edits = edits
    call.files = list(dict.fromkeys([*call.files, *(edit.file for edit in edits)]))
    return call


def parsed_arguments(given: Any) -> Any:
    """A call's arguments as a value: a JSON text parsed, a text that is not JSON kept as it is."""
    if not isinstance(given, str):
        return given
    try:
        return json_value(given)
    except NotJSON:
        return given


def call_edits(name: str, arguments: Any) -> tuple[list[Edit], tuple[str, ...]]:
    """The edits a call of the tool ``name`` made, and the keys of its arguments whose texts they
    hold; none where the arguments are not an object or a text is not text."""
    if not isinstance(arguments, Mapping):
        return [], ()
    file = _file(arguments)
    if arguments.get("command") == "insert":
        return _inserted(file, arguments)
    for old_key, new_key in _PAIRS:
        if new_key in arguments or old_key in arguments:
            edit = text_edit(file, arguments.get(old_key), arguments.get(new_key))
            if edit is None or (old_key not in arguments and not _writes(name, arguments)):
                return [], ()
            return [_stripped(edit)], (old_key, new_key)
    if _writes(name, arguments):
        for key in _WHOLE_KEYS:
            if key in arguments:
                edit = text_edit(file, None, arguments[key])
                return ([_stripped(edit)], (key,)) if edit else ([], ())
    if isinstance(arguments.get("edits"), list):
        return _several(file, arguments["edits"])
    for key in _PATCH_KEYS:
        if isinstance(arguments.get(key), str):
            edits = list(patch_edits(arguments[key]))
            return (edits, (key,)) if edits else ([], ())
    return [], ()


def patch_edits(patch: str) -> Iterator[Edit]:
    """The edits of a patch in the ``*** Begin Patch`` form: a file added as written whole, a file
    updated as its hunks (``@@``, `` ``, ``-``, ``+`` lines); a file deleted holds no text."""
    file, lines, added = "", list[str](), False
    for line in [*patch.splitlines(), "*** End Patch"]:
        if line.startswith(_SECTIONS):
            if file.strip() and lines:
                text = "\n".join(lines)
                yield Edit(file.strip(), None, text) if added else Edit(file.strip(), patch=text)
            file, lines, added = "", [], False
            for start in ("*** Add File: ", "*** Update File: "):
                if line.startswith(start):
                    file, added = line[len(start) :], start == "*** Add File: "
        elif line.startswith("*** "):
            continue
        elif file and added and line.startswith("+"):
            lines.append(line[1:])
        elif file and not added and line.startswith(("@@", " ", "-", "+")):
            lines.append(line)
        elif file and not added and line == "":
            lines.append(" ")


def _writes(name: str, arguments: Mapping[str, Any]) -> bool:
    command = arguments.get("command")
    return name.rsplit("__", 1)[-1].lower() in WRITE_TOOLS or (isinstance(command, str) and command in _WRITE_COMMANDS)


def _file(arguments: Mapping[str, Any]) -> str | None:
    for key in FILE_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _stripped(edit: Edit) -> Edit:
    edit.file = edit.file.strip()
    return edit


def _several(file: str | None, items: list[Any]) -> tuple[list[Edit], tuple[str, ...]]:
    """The replacements of a multi-edit's ``edits``, each in its own file or the call's; none
    unless every one is a replacement of text by text."""
    edits = []
    for item in items:
        found, _ = call_edits("edit", {"file": file, **item}) if isinstance(item, Mapping) else ([], ())
        if len(found) != 1 or found[0].old is None:
            return [], ()
        edits.extend(found)
    return (edits, ("edits",)) if edits else ([], ())


def _inserted(file: str | None, arguments: Mapping[str, Any]) -> tuple[list[Edit], tuple[str, ...]]:
    """Goose's ``insert``: ``new_str`` put after line ``insert_line``, as a patch that adds it."""
    at, new = arguments.get("insert_line"), arguments.get("new_str")
    if not file or not file.strip() or not isinstance(new, str) or type(at) is not int or at < 0:
        return [], ()
    added = new.splitlines() or [""]
    hunk = f"@@ -{at},0 +{at + 1},{len(added)} @@"
    return [Edit(file.strip(), patch="\n".join([hunk, *(f"+{line}" for line in added)]))], ("new_str",)
