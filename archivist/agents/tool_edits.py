"""The changes agents' edit tools made to files, read from a tool call's arguments, for every
reader whose log gives a call's arguments as an object (Cursor, Copilot, Cline, Roo Code, Amp,
Windsurf, Kiro, OpenCode, Crush, Gemini CLI, Qwen Code, Goose, Continue).

A call replaces a text (``old_string``/``new_string``, ``oldString``/``newString``,
``old_str``/``new_str``, ``oldStr``/``newStr``, ``old_text``/``new_text``, ``search``/``replace``),
writes a file whole (a write tool's ``content``, ``contents``, ``file_text`` or ``text``), makes
several replacements (``edits``, ``replacements``), applies SEARCH/REPLACE blocks (Cline's
``replace_in_file``, Roo Code's ``apply_diff``) or a unified diff, applies a patch in the
``*** Begin Patch`` form (``patchText``, ``patch_text``: ``apply_patch``), or inserts lines
(``insert_content``; the ``insert`` command of the CLIs' text editors). A tool whose ``command``
chooses what it does (``str_replace_editor``, ``fs_write``, Goose's ``text_editor``) is read by
its command. Each change is an ``Edit``; the keys holding its texts, and a text the call keeps
verbatim among its commands, are left out of the call's ``input`` (``with_input``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from archivist.agents import Edit, NotJSON, ToolCall, call_input, json_value, text_edit, uri_path
from archivist.agents.apply_patch import find_patch

FILE_KEYS = ("file_path", "filePath", "filepath", "path", "target_file", "targetFile", "absolute_path", "file", "uri")
OLD_KEYS = ("old_string", "oldString", "old_str", "oldStr", "old_text", "oldText", "search")
NEW_KEYS = ("new_string", "newString", "new_str", "newStr", "new_text", "newText", "replace")
CONTENT_KEYS = ("content", "contents", "file_text", "fileText", "text")
LIST_KEYS = ("edits", "replacements")
DIFF_KEYS = ("diff", "patch", "content")
PATCH_KEYS = ("patchText", "patch_text")
# tools named (lower case, without _, - and an MCP server's prefix) as they write a file whole
WRITERS = {"write", "writetofile", "createfile", "create", "createnewfile", "fswrite", "writefile", "newfilecreated"}
# tools whose diff key holds SEARCH/REPLACE blocks or a unified diff
DIFFERS = {"replaceinfile", "applydiff", "editedexistingfile", "applieddiff", "applypatch"}
INSERTERS = {"insertcontent", "insert"}
# tools whose ``command`` chooses what they do
COMMANDED = {"strreplaceeditor", "fswrite", "write", "texteditor"}

_BLOCK_RE = re.compile(
    r"^(?:<{3,}|-{3,}) ?SEARCH[^\n]*\n(.*?)^={3,}[^\n]*\n(.*?)^(?:>{3,}|\+{3,}) ?REPLACE[^\n]*$",
    re.MULTILINE | re.DOTALL,
)
_START_LINE_RE = re.compile(r"\A(?::start_line:\s*\d+\s*\n)?(?::end_line:\s*\d+\s*\n)?(?:-{3,}\s*\n)?")

Found = tuple[list[Edit], set[str]]


def editor_call(name: str, arguments: Any, files: Iterable[str] = (), commands: Iterable[str] = ()) -> ToolCall:
    """A tool call from its ``name`` and its ``arguments`` as the log gives them, with the files
    and commands named (see ``with_input``)."""
    return with_input(ToolCall(name, list(dict.fromkeys(files)), list(commands)), arguments)


def with_input(call: ToolCall, arguments: Any) -> ToolCall:
    """``call`` given its arguments as the log gives them (an object, its JSON text, or anything
    else, kept as text): its input, less a text its edits or its commands hold, and the edits an
    edit tool made, their files added to the call's."""
    given = _object(arguments)
    if given is None:
        call.input = call_input(arguments)
        return call
    edits, held = edits_of(call.name, given)
    commands = {command.strip() for command in call.commands}
    held |= {key for key, value in given.items() if isinstance(value, str) and value.strip() in commands}
    call.input = call_input(given, without=held)
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


def edits_of(name: str, arguments: Mapping[str, Any]) -> Found:
    """The edits a call of the tool ``name`` made with these ``arguments``, and the keys that
    hold their texts (none where a text is not text: the input keeps it)."""
    tool = re.sub(r"[\s_\-]", "", name.rsplit("__", 1)[-1].lower())
    file = _file(arguments)
    command = arguments.get("command") if tool in COMMANDED else None
    if isinstance(command, str) and file:
        found = _commanded(command, file, arguments)
        if found is not None:
            return found
    if file:
        for found in (_replaced(file, arguments), _diffed(tool, file, arguments), _written(tool, file, arguments)):
            if found is not None:
                return found
        if tool in INSERTERS and (found := _inserted(file, arguments)) is not None:
            return found
    return _patched(arguments) or _listed(file, arguments)


def search_replace_blocks(diff: str) -> list[tuple[str, str]]:
    """The SEARCH/REPLACE blocks of a diff (``<<<<<<< SEARCH`` or ``------- SEARCH`` … ``=======``
    … ``>>>>>>> REPLACE`` or ``+++++++ REPLACE``): each block's text searched and its replacement,
    without Roo Code's ``:start_line:`` lines."""
    blocks = []
    for match in _BLOCK_RE.finditer(diff):
        old = _START_LINE_RE.sub("", match[1], count=1)
        blocks.append((old.removesuffix("\n"), match[2].removesuffix("\n")))
    return blocks


def _commanded(command: str, file: str, arguments: Mapping[str, Any]) -> Found | None:
    if command in ("create", "write"):
        key = _key(arguments, ("file_text", "content", "text"))
        edit = text_edit(file, None, arguments[key]) if key else None
        return ([edit], {key}) if edit is not None and key else None
    if command == "str_replace":
        edit = text_edit(file, arguments.get("old_str"), arguments.get("new_str"))
        return ([edit], {"old_str", "new_str"}) if edit is not None and edit.old is not None else None
    if command in ("insert", "append"):
        return _inserted(file, arguments, line_key="insert_line", text_key="new_str", after=True)
    return None


def _replaced(file: str, arguments: Mapping[str, Any]) -> Found | None:
    old, new = _key(arguments, OLD_KEYS), _key(arguments, NEW_KEYS)
    edit = text_edit(file, arguments[old], arguments[new]) if old and new else None
    return ([edit], {old, new}) if edit is not None and old and new else None


def _written(tool: str, file: str, arguments: Mapping[str, Any]) -> Found | None:
    key = _key(arguments, CONTENT_KEYS) if tool in WRITERS else None
    edit = text_edit(file, None, arguments[key]) if key else None
    return ([edit], {key}) if edit is not None and key else None


def _diffed(tool: str, file: str, arguments: Mapping[str, Any]) -> Found | None:
    key = _key(arguments, DIFF_KEYS) if tool in DIFFERS else None
    if key is None:
        return None
    diff = arguments[key]
    blocks = search_replace_blocks(diff)
    if blocks:
        return [Edit(file, old, new) for old, new in blocks], {key}
    if any(line.startswith("@@") for line in diff.splitlines()):
        return [Edit(file, patch=diff)], {key}
    return None


def _patched(arguments: Mapping[str, Any]) -> Found | None:
    """A patch in the ``*** Begin Patch`` form (``apply_patch``): one edit per file."""
    key = _key(arguments, PATCH_KEYS)
    patch = find_patch(arguments[key]) if key else None
    return (patch.edits, {key}) if patch is not None and key else None


def _inserted(
    file: str, arguments: Mapping[str, Any], line_key: str = "line", text_key: str = "content", after: bool = False
) -> Found | None:
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


def _listed(file: str | None, arguments: Mapping[str, Any]) -> Found:
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
            value = value.strip()
            return uri_path(value) or value if value.startswith("file:") else value
    return None


def _key(arguments: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    return next((key for key in keys if isinstance(arguments.get(key), str)), None)


def _object(arguments: Any) -> dict[str, Any] | None:
    """The arguments as an object: as they are, or read from JSON text; None for anything else."""
    arguments = parsed_arguments(arguments)
    return arguments if isinstance(arguments, dict) else None
