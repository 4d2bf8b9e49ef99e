"""What every HTTP surface checks before anything else: Host, Origin and the bearer token;
and the Content-Security-Policy that every response carries.

A server bound to loopback answers only requests addressed to loopback names, so a
web page the user visits cannot reach it through a name of its own that resolves
to 127.0.0.1 (DNS rebinding). Other names can be allowed by the operator
(``--allow-host``). A request that names an ``Origin`` (a browser's call from a page)
must come from the server's own origin: the same scheme, host and port, so a page
served from another local port is as foreign as any other site. Other origins can be
allowed by the operator (``--allow-origin``). When a token is set, every request
carries it: ``Authorization: Bearer <token>``, ``?token=<token>`` in the URL, or, for a
browser, the cookie that opening a page with ``?token=<token>`` sets once. A browser that comes
without it gets a page that says how to open the server (the sign-in page); other clients get the
JSON error. A path that holds a line break is no path of any page: it is refused (400) before anything else.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import secrets
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from archivist.errors import ArchivistError

ASGIApp = Callable[[dict, Callable, Callable], Awaitable[None]]
Origin = tuple[str, str, int]  # scheme, host name, port: what "the same origin" compares
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
TOKEN_ENV = "ARCHIVIST_TOKEN"
OLD_TOKEN_ENV = "ARCHIVIST_MCP_TOKEN"  # its first name, when only the MCP server took a token
COOKIE = "archivist_token"  # and the server's port: archivist_token_8001 (two servers keep theirs apart)
DEFAULT_PORTS = {"http": 80, "https": 443}
WEBSOCKET_SCHEMES = {"ws": "http", "wss": "https"}  # a websocket's origin is its page's
PATH_CHARACTERS = "/:@!$&'()*+,;=-._~"  # besides letters and digits, what a URL's path holds as it is (RFC 3986)
LINE_BREAKS = ("\r", "\n")
SIGN_IN_TEMPLATE = Path(__file__).parent / "templates" / "archivist_sign_in.html"
KEPT_QUERY_LIMIT = 8192  # a longer query is not carried through the sign-in form: the page opens without it


def token_from_environment() -> str | None:
    return os.environ.get(TOKEN_ENV) or os.environ.get(OLD_TOKEN_ENV) or None


def new_token() -> str:
    """A token for one run of a server, made at its start (as Jupyter does): 256 random bits."""
    return secrets.token_urlsafe(32)


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


def parse_origin(text: str) -> Origin | None:
    """'HTTP://Example.com' -> ('http', 'example.com', 80); None for anything but an http(s) origin.

    ``null`` (a sandboxed page, a file), a path, user info, a bad port or stray
    characters are no origin, so they never equal the server's own.
    """
    if not text.isprintable() or any(character.isspace() for character in text):
        return None
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:  # a malformed port or bracket
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return None
    return scheme, parts.hostname.lower(), DEFAULT_PORTS[scheme] if port is None else port


def shown_origin(origin: Origin) -> str:
    """('http', '::1', 8001) -> 'http://[::1]:8001', the default port left out."""
    scheme, host, port = origin
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + ("" if DEFAULT_PORTS[scheme] == port else f":{port}")


def request_origin(scope: dict, headers: dict[str, str]) -> Origin | None:
    """The origin a request was addressed to: the scheme it came over, the host and port of its Host header."""
    host = headers.get("host", "")
    if not host:
        return None
    scheme = str(scope.get("scheme") or "http").lower()
    return parse_origin(f"{WEBSOCKET_SCHEMES.get(scheme, scheme)}://{host}")


def content_security_policy(script_hashes: Iterable[str] = ()) -> str:
    """Only the app's own resources: its scripts are its files, and the inline scripts named by their hashes.

    Styles allow 'unsafe-inline': Datasette's own templates write ``style=`` attributes and a
    ``<style>`` block made of each table's column names, different on every page, which no hash
    can name. A style cannot run code; scripts get no such allowance.
    """
    scripts = " ".join(["'self'", *(f"'sha256-{digest}'" for digest in sorted(set(script_hashes)))])
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src {scripts}",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data:",
            "object-src 'none'",
            "frame-ancestors 'none'",
            "base-uri 'self'",
            "form-action 'self'",
        ]
    )


@dataclass(frozen=True)
class Guard:
    """The checks for one server: extra allowed host names and origins, the token if any, and its pages' policy."""

    allowed_hosts: frozenset[str] = field(default_factory=frozenset)
    token: str | None = None
    allowed_origins: frozenset[Origin] = field(default_factory=frozenset)
    policy: str = field(default_factory=content_security_policy)

    @classmethod
    def of(
        cls,
        allowed_hosts: Iterable[str] = (),
        token: str | None = None,
        allowed_origins: Iterable[str] = (),
        policy: str | None = None,
    ) -> Guard:
        """A guard from the operator's words; an allowed origin that is no origin (see parse_origin) allows nothing."""
        names = {_hostname(host) or host.lower() for host in allowed_hosts if host}
        origins = {parse_origin(origin.strip()) for origin in allowed_origins}
        return cls(
            frozenset(names),
            token or None,
            frozenset(origin for origin in origins if origin is not None),
            policy or content_security_policy(),
        )

    def host_allowed(self, hostname: str, bound_to_loopback: bool) -> bool:
        if hostname in self.allowed_hosts:
            return True
        if bound_to_loopback:
            return hostname in LOOPBACK_NAMES
        return not self.allowed_hosts  # bound elsewhere: checked only when the operator listed names

    def origin_allowed(self, origin: str, scope: dict, headers: dict[str, str]) -> bool:
        """The request's own origin (same scheme, host and port), or one the operator named."""
        given = parse_origin(origin)
        return given is not None and (given == request_origin(scope, headers) or given in self.allowed_origins)

    def refusal(self, scope: dict) -> tuple[int, ArchivistError] | None:
        """Why this request is refused (HTTP status and error), or None."""
        if any(line_break in str(scope.get("path") or "") for line_break in LINE_BREAKS):
            return 400, ArchivistError(
                "INVALID_PARAMETER",
                "Request refused: its path holds a line break (CR or LF, sent as %0D or %0A)",
                "No page of this server has one in its path.",
                "Remove it from the URL (Datasette writes one in a table's or a row's name as ~0D or ~0A).",
            )
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
        if origin is not None and not self.origin_allowed(origin, scope, headers):
            return 403, ArchivistError(
                "FORBIDDEN",
                "Request refused: cross-origin requests are not allowed",
                "Only pages served by this server itself (the same scheme, host and port) may call it; "
                "a page from another port of this machine is another origin.",
                "Open the page from this server, or start it with --allow-origin ORIGIN "
                "(e.g. --allow-origin http://127.0.0.1:3000) to allow that origin.",
            )
        if self.token is not None and not self._token_given(scope, headers):
            return 401, ArchivistError(
                "UNAUTHORIZED",
                "Missing or wrong token",
                f"This server is closed without its token (the one it printed at its start, or {TOKEN_ENV}).",
                "Send the header Authorization: Bearer <token>, or open the URL the server printed (?token=...).",
            )
        return None

    def _token_given(self, scope: dict, headers: dict[str, str]) -> bool:
        given = [headers.get("authorization", "").removeprefix("Bearer ")]
        cookie: SimpleCookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed cookie header is no token
            pass
        name = cookie_name(scope)
        if name in cookie:
            given.append(cookie[name].value)
        return any(self._is_token(value) for value in given if value)

    def _is_token(self, value: str) -> bool:
        assert self.token is not None
        return hmac.compare_digest(
            value.encode("utf-8", "surrogateescape"), self.token.encode("utf-8", "surrogateescape")
        )

    def _without_url_token(self, scope: dict) -> str | None:
        """The query string without ``token=`` when the URL carries the right token; else None."""
        if self.token is None or scope.get("type") != "http":
            return None
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        tokens = [value for key, value in query if key == "token"]
        if not tokens or not self._is_token(tokens[0]):
            return None
        return urlencode([(key, value) for key, value in query if key != "token"])

    def _with_policy(self, send: Callable) -> Callable:
        """``send`` that adds the Content-Security-Policy to a response that has none (an inner guard's wins)."""
        header = [b"content-security-policy", self.policy.encode("latin-1")]

        async def sending(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                if not any(bytes(name).lower() == b"content-security-policy" for name, _ in headers):
                    message = {**message, "headers": [*headers, header]}
            await send(message)

        return sending

    def wrap(self, app: ASGIApp) -> ASGIApp:
        async def guarded(scope: dict, receive: Callable, send: Callable) -> None:
            if scope.get("type") not in ("http", "websocket"):
                return await app(scope, receive, send)
            refusal = self.refusal(scope)
            if refusal is not None and scope["type"] == "websocket":
                return await send({"type": "websocket.close", "code": 1008})
            send = self._with_policy(send)
            rest = self._without_url_token(scope) if refusal is None or refusal[0] == 401 else None
            if rest is not None and _is_page_visit(scope):
                # a browser opening the printed URL: the token moves to a cookie and leaves the address bar
                target = same_path(scope) + (f"?{rest}" if rest else "")
                return await _redirect_with_cookie(send, target, cookie_name(scope), self.token or "")
            if rest is not None:  # a client that cannot send headers, with the token in its URL
                scope = {**scope, "query_string": rest.encode("latin-1")}
                refusal = None
            if refusal is not None and refusal[0] == 401 and _wants_page(scope):
                return await _sign_in(send, scope)
            if refusal is not None:
                status, error = refusal
                return await _refuse(send, status, error)
            await app(scope, receive, send)

        return guarded


def _headers(scope: dict) -> dict[str, str]:
    return {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers") or []}


def same_path(scope: dict) -> str:
    """The request's path as a redirect's Location that names it on this server, whatever it holds.

    It is percent-encoded (escapes kept as they came) with one slash in front, so it keeps none of
    what browsers read as another site: a second slash in front (``//host``), a backslash (which
    they take for a slash), a tab or line break (which they drop), a space or control character.
    """
    raw = scope.get("raw_path")
    if isinstance(raw, bytes) and raw:
        path = quote(raw, safe=PATH_CHARACTERS + "%")
    else:
        path = quote(str(scope.get("path") or "/").encode("utf-8", "surrogatepass"), safe=PATH_CHARACTERS)
    return "/" + path.lstrip("/")


def _is_page_visit(scope: dict) -> bool:
    """A browser opening a page: GET or HEAD, asking for HTML (as every browser's navigation does)."""
    return scope.get("method") in ("GET", "HEAD") and "text/html" in _headers(scope).get("accept", "")


def _is_json_path(scope: dict) -> bool:
    """A path that answers JSON whatever the client asks for: Datasette's ``.json``, the API, MCP."""
    path = str(scope.get("path") or "")
    return path.endswith(".json") or path.startswith("/api/") or path.rstrip("/").endswith("/mcp")


def _wants_page(scope: dict) -> bool:
    """A browser's page visit to a page path: it gets the sign-in page, where a JSON client gets the JSON error."""
    accept = _headers(scope).get("accept", "").lstrip().lower()
    return _is_page_visit(scope) and not accept.startswith("application/json") and not _is_json_path(scope)


def _kept_query(scope: dict) -> list[tuple[str, str]]:
    """The query's names and values but the token, for the sign-in form to carry on; none that is not printable."""
    query = scope.get("query_string", b"")
    if not isinstance(query, bytes) or len(query) > KEPT_QUERY_LIMIT:
        return []
    pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
    return [(key, value) for key, value in pairs if key != "token" and key.isprintable() and value.isprintable()]


@cache
def _sign_in_template() -> Any:
    from jinja2 import Environment

    return Environment(autoescape=True).from_string(SIGN_IN_TEMPLATE.read_text(encoding="utf-8"))


def sign_in_page(scope: dict) -> str:
    """The sign-in page for this request: the form that brings it back here with the token, and the
    origin the printed URL starts with; never the token itself. A token given in the URL was wrong."""
    origin = request_origin(scope, _headers(scope))
    query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    return _sign_in_template().render(
        action=same_path(scope),
        kept=_kept_query(scope),
        origin=shown_origin(origin) if origin else "",
        wrong=any(key == "token" for key, _ in query),
        token_env=TOKEN_ENV,
    )


async def _sign_in(send: Callable, scope: dict) -> None:
    headers = [
        [b"content-type", b"text/html; charset=utf-8"],
        [b"www-authenticate", b"Bearer"],
        [b"cache-control", b"no-store"],
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": sign_in_page(scope).encode("utf-8")})


async def _refuse(send: Callable, status: int, error: ArchivistError) -> None:
    headers = [[b"content-type", b"application/json; charset=utf-8"]]
    if status == 401:
        headers.append([b"www-authenticate", b"Bearer"])
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(error.to_dict(), ensure_ascii=False).encode()})


def cookie_name(scope: dict) -> str:
    """The cookie that signs a browser in to this server: named for its port, since a browser sends a
    host's cookies to every port of it (a cookie cannot be kept to one: docs/search.md says so)."""
    server = scope.get("server") or ("", None)
    return f"{COOKIE}_{server[1]}" if isinstance(server[1], int) else COOKIE


async def _redirect_with_cookie(send: Callable, target: str, name: str, token: str) -> None:
    cookie = f"{name}={token}; Path=/; HttpOnly; SameSite=Strict"
    headers = [[b"location", target.encode("ascii")], [b"set-cookie", cookie.encode("latin-1")]]
    await send({"type": "http.response.start", "status": 302, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def guarded(
    app: Any, allowed_hosts: Iterable[str] = (), token: str | None = None, allowed_origins: Iterable[str] = ()
) -> ASGIApp:
    return Guard.of(allowed_hosts, token, allowed_origins).wrap(app)
