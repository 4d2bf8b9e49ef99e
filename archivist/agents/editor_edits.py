"""The changes editor agents' edit tools make, read from a tool call's arguments: Cursor's,
Copilot's (VS Code chat and the CLI), Cline's and Roo Code's, Amp's, Windsurf's and Kiro's.

A call replaces a text (``old_string``/``new_string``, ``oldString``/``newString``, ``old_str``/
``new_str``, ``oldStr``/``newStr``, ``search``/``replace``), writes a file whole (a write tool's
``content``, ``contents``, ``file_text`` or ``text``), makes several replacements (``edits``,
``replacements``), applies SEARCH/REPLACE blocks (Cline's ``replace_in_file``, Roo Code's
``apply_diff``) or a unified diff, or inserts lines (``insert_content``, ``insert`` at a line).
Each becomes an ``Edit``; the keys holding its texts are left out of the call's ``input``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from archivist.agents import Edit, NotJSON, ToolCall, call_input, json_value, text_edit, uri_path

FILE_KEYS = ("file_path", "filePath", "path", "target_file", "targetFile", "file", "uri")
OLD_KEYS = ("old_string", "oldString", "old_str", "oldStr", "old_text", "oldText", "search")
NEW_KEYS = ("new_string", "newString", "new_str", "newStr", "new_text", "newText", "replace")
CONTENT_KEYS = ("content", "contents", "file_text", "fileText", "text")
LIST_KEYS = ("edits", "replacements")
DIFF_KEYS = ("diff", "patch", "content")
# tools that write a file whole from a content key (by name, lower case, without _ and -)
WRITERS = {"write", "writetofile", "createfile", "create", "fswrite", "writefile", "newfilecreated"}
# tools whose diff key holds SEARCH/REPLACE blocks or a unified diff
DIFFERS = {"replaceinfile", "applydiff", "editedexistingfile", "applieddiff", "applypatch"}
INSERTERS = {"insertcontent", "insert"}
# tools whose ``command`` chooses what they do: Copilot CLI's str_replace_editor, the Kiro CLI's fs_write
COMMANDED = {"strreplaceeditor", "fswrite", "write"}

_BLOCK_RE = re.compile(
    r"^(?:<{3,}|-{3,}) ?SEARCH[^\n]*\n(.*?)^={3,}[^\n]*\n(.*?)^(?:>{3,}|\+{3,}) ?REPLACE[^\n]*$",
    re.MULTILINE | re.DOTALL,
)
_START_LINE_RE = re.compile(r"\A(?::start_line:\s*\d+\s*\n)?(?::end_line:\s*\d+\s*\n)?(?:-{3,}\s*\n)?")


def editor_call(name: str, arguments: Any, files: Iterable[str] = (), commands: Iterable[str] = ()) -> ToolCall:
    """A tool call from its ``name`` and its ``arguments`` as the log gives them (an object, its
    JSON text, or anything else, kept as text): the files and commands named, its input (less a
    text its edits or its commands hold), and the edits an edit tool made (their files added)."""
    given = _object(arguments)
    commands = list(commands)
    if given is None:
        return ToolCall(name, list(dict.fromkeys(files)), commands, input=call_input(arguments))
    edits, held = edits_of(name, given)
    held |= {key for key, value in given.items() if isinstance(value, str) and value in commands}
    named = list(dict.fromkeys([*files, *(edit.file for edit in edits)]))
    return ToolCall(name, named, commands, input=call_input(given, without=held), edits=edits)


def edits_of(name: str, arguments: Mapping[str, Any]) -> tuple[list[Edit], set[str]]:
    """The edits a call of the tool ``name`` made with these ``arguments``, and the keys that
    hold their texts (none where a text is not text: the input keeps it)."""
    tool = re.sub(r"[\s_\-]", "", name.lower())
    file = _file(arguments)
    command = arguments.get("command") if tool in COMMANDED else None
    if isinstance(command, str) and file:
        found = _commanded(command, file, arguments)
        if found is not None:
            return found
    if file:
        old, new = _key(arguments, OLD_KEYS), _key(arguments, NEW_KEYS)
        if old and new:
            edit = text_edit(file, arguments[old], arguments[new])
            if edit is not None:
                return [edit], {old, new}
        if tool in DIFFERS:
            found = _diffed(file, arguments)
            if found is not None:
                return found
        if tool in INSERTERS:
            found = _inserted(file, arguments)
            if found is not None:
                return found
        if tool in WRITERS:
            key = _key(arguments, CONTENT_KEYS)
            edit = text_edit(file, None, arguments[key]) if key else None
            if edit is not None and key is not None:
                return [edit], {key}
    return _listed(file, arguments)


def search_replace_blocks(diff: str) -> list[tuple[str, str]]:
    """The SEARCH/REPLACE blocks of a diff (``<<<<<<< SEARCH`` or ``------- SEARCH`` … ``=======``
    … ``>>>>>>> REPLACE`` or ``+++++++ REPLACE``): each block's text searched and its replacement,
    without Roo Code's ``:start_line:`` lines."""
    blocks = []
    for match in _BLOCK_RE.finditer(diff):
        old = _START_LINE_RE.sub("", match[1], count=1)
        blocks.append((old.removesuffix("\n"), match[2].removesuffix("\n")))
    return blocks


def _commanded(command: str, file: str, arguments: Mapping[str, Any]) -> tuple[list[Edit], set[str]] | None:
    if command == "create":
        key = _key(arguments, ("file_text", "content", "text"))
        edit = text_edit(file, None, arguments[key]) if key else None
        return ([edit], {key}) if edit is not None and key else None
    if command == "str_replace":
        edit = text_edit(file, arguments.get("old_str"), arguments.get("new_str"))
        return ([edit], {"old_str", "new_str"}) if edit is not None and edit.old is not None else None
    if command in ("insert", "append"):
        return _inserted(file, arguments, line_key="insert_line", text_key="new_str", after=True)
    return None


def _diffed(file: str, arguments: Mapping[str, Any]) -> tuple[list[Edit], set[str]] | None:
    key = _key(arguments, DIFF_KEYS)
    if key is None:
        return None
    diff = arguments[key]
    blocks = search_replace_blocks(diff)
    if blocks:
        return [Edit(file, old, new) for old, new in blocks], {key}
    if any(line.startswith("@@") for line in diff.splitlines()):
        return [Edit(file, patch=diff)], {key}
    return None


def _inserted(
    file: str, arguments: Mapping[str, Any], line_key: str = "line", text_key: str = "content", after: bool = False
) -> tuple[list[Edit], set[str]] | None:
    """Lines put in before a line (``after`` it, for the CLIs' ``insert_line``) as a patch; where
    no line is given (0, none: at the end) the hunk says no place."""
    text = arguments.get(text_key)
    if not isinstance(text, str):
        return None
    line = arguments.get(line_key)
    lines = text.splitlines() or [""]
    if isinstance(line, int) and not isinstance(line, bool) and (line > 0 or (after and line == 0)):
        kept = line if after else line - 1
        hunk = f"@@ -{kept},0 +{kept + 1},{len(lines)} @@"
    else:
        hunk = f"@@ +{len(lines)} @@"
    patch = "\n".join([hunk, *(f"+{piece}" for piece in lines)])
    return [Edit(file, patch=patch)], {text_key}


def _listed(file: str | None, arguments: Mapping[str, Any]) -> tuple[list[Edit], set[str]]:
    """Several replacements (``edits`` or ``replacements``), each in the call's file or its own;
    none where one of them is not a replacement of text by text."""
    for key in LIST_KEYS:
        items = arguments.get(key)
        if not isinstance(items, list) or not items:
            continue
        edits = []
        for item in items:
            if not isinstance(item, Mapping):
                return [], set()
            old, new = _key(item, OLD_KEYS), _key(item, NEW_KEYS)
            edit = text_edit(_file(item) or file, item.get(old) if old else None, item.get(new) if new else None)
            if edit is None or edit.old is None:
                return [], set()
            edits.append(edit)
        return edits, {key}
    return [], set()


def _file(arguments: Mapping[str, Any]) -> str | None:
    for key in FILE_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return uri_path(value) or value if value.startswith("file:") else value
    return None


def _key(arguments: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    return next((key for key in keys if isinstance(arguments.get(key), str)), None)


def _object(arguments: Any) -> dict[str, Any] | None:
    """The arguments as an object: as they are, or read from JSON text; None for anything else."""
    if isinstance(arguments, str):
        try:
            arguments = json_value(arguments)
        except NotJSON:
            return None
    return arguments if isinstance(arguments, dict) else None
