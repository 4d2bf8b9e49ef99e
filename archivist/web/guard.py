"""What every HTTP surface checks before anything else: Host, Origin and the bearer token.

A server bound to loopback answers only requests addressed to loopback names, so a
web page the user visits cannot reach it through a name of its own that resolves
to 127.0.0.1 (DNS rebinding), nor call it from its own origin. Other names can be
allowed by the operator (``--allow-host``). When a token is set, every request
carries it: ``Authorization: Bearer <token>``, or, for a browser, the cookie that
``?token=<token>`` sets once.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from archivist.errors import ArchivistError

ASGIApp = Callable[[dict, Callable, Callable], Awaitable[None]]
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
TOKEN_ENV = "ARCHIVIST_TOKEN"
OLD_TOKEN_ENV = "ARCHIVIST_MCP_TOKEN"  # its first name, when only the MCP server took a token
COOKIE = "archivist_token"


def token_from_environment() -> str | None:
    return os.environ.get(TOKEN_ENV) or os.environ.get(OLD_TOKEN_ENV) or None


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _hostname(authority: str) -> str:
    """'Example.com:8001' -> 'example.com'; '[::1]:80' -> '::1'."""
    try:
        return (urlsplit("//" + authority).hostname or "").lower()
    except ValueError:  # a malformed port or bracket
        return ""


@dataclass(frozen=True)
class Guard:
    """The checks for one server: extra allowed host names, and the token if any."""

    allowed_hosts: frozenset[str] = field(default_factory=frozenset)
    token: str | None = None

    @classmethod
    def of(cls, allowed_hosts: Iterable[str] = (), token: str | None = None) -> Guard:
        names = {_hostname(host) or host.lower() for host in allowed_hosts if host}
        return cls(frozenset(names), token or None)

    def host_allowed(self, hostname: str, bound_to_loopback: bool) -> bool:
        if hostname in self.allowed_hosts:
            return True
        if bound_to_loopback:
            return hostname in LOOPBACK_NAMES
        return not self.allowed_hosts  # bound elsewhere: checked only when the operator listed names

    def refusal(self, scope: dict) -> tuple[int, ArchivistError] | None:
        """Why this request is refused (HTTP status and error), or None."""
        headers = _headers(scope)
        server = scope.get("server") or ("", None)
        bound_to_loopback = is_loopback(str(server[0] or ""))
        if not self.host_allowed(_hostname(headers.get("host", "")), bound_to_loopback):
            return 421, ArchivistError(
                "FORBIDDEN",
                "Request refused: this server does not answer for that host name",
                "It answers only requests addressed to localhost or 127.0.0.1 (a guard against DNS rebinding).",
                "Open it at http://127.0.0.1:PORT/, or start it with --allow-host NAME.",
            )
        origin = headers.get("origin")
        if origin is not None and not self.host_allowed(
            _hostname(urlsplit(origin).netloc) if "://" in origin else "", bound_to_loopback
        ):
            return 403, ArchivistError(
                "FORBIDDEN",
                "Request refused: cross-origin requests are not allowed",
                "Only pages served by this server (or an allowed host) may call it.",
                "Start the server with --allow-host NAME to allow another origin.",
            )
        if self.token is not None and not self._token_given(scope, headers):
            return 401, ArchivistError(
                "UNAUTHORIZED",
                "Missing or wrong token",
                f"This server was started with a token ({TOKEN_ENV}).",
                "Send the header Authorization: Bearer <token>, or open the URL the server printed (?token=...).",
            )
        return None

    def _token_given(self, scope: dict, headers: dict[str, str]) -> bool:
        assert self.token is not None
        given = [headers.get("authorization", "").removeprefix("Bearer ")]
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header is no token
            pass
        if COOKIE in cookie:
            given.append(cookie[COOKIE].value)
        return any(hmac.compare_digest(value.encode(), self.token.encode()) for value in given if value)

    def _token_in_url(self, scope: dict) -> str | None:
        """The URL without ``token=`` when it carries the right token (a browser's first visit)."""
        if self.token is None or scope.get("type") != "http":
            return None
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        tokens = [value for key, value in query if key == "token"]
        if not tokens or not hmac.compare_digest(tokens[0].encode(), self.token.encode()):
            return None
        rest = urlencode([(key, value) for key, value in query if key != "token"])
        return scope.get("path", "/") + (f"?{rest}" if rest else "")

    def wrap(self, app: ASGIApp) -> ASGIApp:
        async def guarded(scope: dict, receive: Callable, send: Callable) -> None:
            if scope.get("type") not in ("http", "websocket"):
                return await app(scope, receive, send)
            refusal = self.refusal(scope)
            if refusal is not None and scope["type"] == "websocket":
                return await send({"type": "websocket.close", "code": 1008})
            if refusal is not None and refusal[0] == 401:
                target = self._token_in_url(scope)
                if target is not None:
                    return await _redirect_with_cookie(send, target, self.token or "")
            if refusal is not None:
                status, error = refusal
                return await _refuse(send, status, error)
            await app(scope, receive, send)

        return guarded


def _headers(scope: dict) -> dict[str, str]:
    return {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers") or []}


async def _refuse(send: Callable, status: int, error: ArchivistError) -> None:
    headers = [[b"content-type", b"application/json; charset=utf-8"]]
    if status == 401:
        headers.append([b"www-authenticate", b"Bearer"])
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(error.to_dict(), ensure_ascii=False).encode()})


async def _redirect_with_cookie(send: Callable, target: str, token: str) -> None:
    cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict"
    headers = [[b"location", target.encode("latin-1", "replace")], [b"set-cookie", cookie.encode("latin-1")]]
    await send({"type": "http.response.start", "status": 302, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def guarded(app: Any, allowed_hosts: Iterable[str] = (), token: str | None = None) -> ASGIApp:
    return Guard.of(allowed_hosts, token).wrap(app)
