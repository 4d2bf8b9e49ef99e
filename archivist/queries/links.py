"""Links to reports: the report server's page, else the file (``archivist_report_link``)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable


def file_url(absolute_path: str | None) -> str | None:
    if not absolute_path:
        return None
    return "file://" + urllib.parse.quote(absolute_path)


def make_report_link(base_url: str | None) -> Callable[[str | None, str | None, str | None], str | None]:
    def report_link(command: str | None, name: str | None, absolute_path: str | None) -> str | None:
        if base_url and command and name:
            return f"{base_url.rstrip('/')}/{urllib.parse.quote(command)}/{urllib.parse.quote(name)}"
        return file_url(absolute_path)

    return report_link
