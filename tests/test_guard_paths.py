"""The guard and hostile request paths: the redirect that signs a browser in (``?token=``) stays
on the server for every path, and a line break in a path is a clean 400 with the error body."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
from pathlib import Path
from urllib.parse import quote, unquote, unquote_to_bytes, urljoin, urlsplit

import h11
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_mcp import launcher

from archivist.web.guard import Guard, same_path

BASE = "http://127.0.0.1:8001/"
TOKEN = "T0ken-for-the-tests"
C0_AND_SPACE = "".join(chr(code) for code in range(0x21))

# Paths as they come over the wire (the request-target before "?"): what h11 lets through is printable ASCII.
HOSTILE_TARGETS = (
    b"/%5Cevil.com",
    b"/\\evil.com",
    b"/%5C%5Cevil.com",
    b"/\\\\evil.com",
    b"/\\/evil.com",
    b"/%5C/evil.com",
    b"//evil.com",
    b"///evil.com",
    b"//evil.com/%2F..",
    b"/%2F%2Fevil.com",
    b"/%2F/evil.com",
    b"/%09/evil.com",
    b"/%0D%0A//evil.com",
    b"/%0A/evil.com",
    b"/%00//evil.com",
    b"/%20//evil.com",
    b"/%7F//evil.com",
    b"/.//evil.com",
    b"/..//evil.com",
    b"/%2e%2e//evil.com",
    b"/%2e/%2fevil.com",
    b"/%E3%80%82evil.com",
    b"/%EF%BC%8Fevil.com",
    b"/%C0%AFevil.com",
    b"/http://evil.com/",
    b"http://evil.com/",
    b"https:evil.com",
    b"javascript:alert(1)",
    b"/%zz",
    b"/%",
    b"*",
)
# Decoded paths from an ASGI server that sends no raw_path.
HOSTILE_PATHS = (
    "/\\evil.com",
    "\\\\evil.com",
    "/\t/evil.com",
    "/\n/evil.com",
    "\t//evil.com",
    " //evil.com",
    "/ /evil.com",
    "/\x00/evil.com",
    "/\x0b/evil.com",
    "/\x0c/evil.com",
    "/\x1f/evil.com",
    "/\x7f/evil.com",
    "/\u3002evil.com",
    "/\uff0fevil.com",
    "/\u2028/evil.com",
    "/\u00a0/evil.com",
    "/é/日本",
    "javascript:alert(1)",
    "http://evil.com",
    "",
)


def browser_readings(location: str) -> list[str]:
    """What a browser may make of a Location before resolving it (the WHATWG URL parser): the value
    as sent, without its tabs and line breaks, its backslashes taken for slashes, and C0 controls
    and spaces trimmed from its ends."""
    stripped = location.replace("\t", "").replace("\n", "").replace("\r", "")
    slashed = stripped.replace("\\", "/")
    return [location, stripped, slashed, slashed.strip(C0_AND_SPACE)]


def on_this_server(location: str) -> bool:
    """Whether every reading of ``location``, resolved against this server's URL, is on this server."""
    for reading in browser_readings(location):
        try:
            parts = urlsplit(urljoin(BASE, reading))
            place = (parts.scheme, parts.hostname, parts.port)
        except ValueError:  # a port that is no number: another place
            return False
        if place != ("http", "127.0.0.1", 8001):
            return False
    return True


def is_header_value(value: bytes) -> bool:
    """Whether h11 (uvicorn's HTTP) sends ``value`` as a header's value."""
    try:
        h11.Response(status_code=302, headers=[(b"location", value)])
    except h11.LocalProtocolError:
        return False
    return True


def scope_of(
    path: str, raw_path: bytes | None = None, query: bytes = b"token=" + TOKEN.encode(), **headers: str
) -> dict:
    """An HTTP request's ASGI scope as uvicorn makes it, to 127.0.0.1:8001, asking for a page."""
    headers = {"host": "127.0.0.1:8001", "accept": "text/html", **headers}
    return {
        "type": "http",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": raw_path,
        "query_string": query,
        "headers": [(name.encode(), value.encode("latin-1")) for name, value in headers.items()],
        "server": ("127.0.0.1", 8001),
    }


def wire_scope(target: bytes, query: bytes = b"token=" + TOKEN.encode(), **headers: str) -> dict:
    """The scope of a request-target as uvicorn reads it: raw_path as sent, path percent-decoded."""
    return scope_of(unquote(target.decode("ascii")), target, query, **headers)


def answer(guard: Guard, scope: dict) -> tuple[int, dict[str, str], bytes, bool]:
    """What the guarded app answers a request: status, headers, body, and whether the app was reached."""
    reached = []
    sent: list[dict] = []

    async def app(scope: dict, receive, send) -> None:
        reached.append(scope)
        await send({"type": "http.response.start", "status": 200, "headers": [[b"content-type", b"text/plain"]]})
        await send({"type": "http.response.body", "body": b"the app"})

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    async def call() -> None:
        await guard.wrap(app)(scope, receive, send)

    asyncio.run(call())
    start, body = sent[0], b"".join(message.get("body", b"") for message in sent[1:])
    for name, value in start["headers"]:
        assert is_header_value(bytes(value)), (name, value)
    headers = {bytes(name).decode().lower(): bytes(value).decode("latin-1") for name, value in start["headers"]}
    return start["status"], headers, body, bool(reached)


def assert_redirected_on_this_server(guard: Guard, scope: dict) -> str:
    status, headers, _, reached = answer(guard, scope)
    assert status == 302 and not reached, (scope["path"], status)
    location = headers["location"]
    assert on_this_server(location), (scope["path"], location)
    sent = scope["raw_path"] or quote(scope["path"].encode("utf-8", "surrogatepass")).encode()
    assert unquote_to_bytes(location).lstrip(b"/") == unquote_to_bytes(sent).lstrip(b"/")  # the same path, no token
    return location


def assert_line_break_refused(status: int, headers: dict[str, str], body: bytes) -> None:
    assert status == 400, (status, body[:200])
    assert headers["content-type"] == "application/json; charset=utf-8" and "content-security-policy" in headers
    error = json.loads(body)
    assert set(error) == {"success", "error", "code"} and error["success"] is False
    assert error["code"] == "INVALID_PARAMETER" and error["error"].startswith("❌") and "line break" in error["error"]


def test_the_check_itself_catches_what_browsers_read_as_another_site():
    for elsewhere in ("/\\evil.com", "//evil.com", "/\t/evil.com", "\\\\evil.com", " //evil.com", "http://evil.com/"):
        assert not on_this_server(elsewhere), elsewhere
    for here in ("/", "/evil.com", "/%5Cevil.com", "/.//evil.com", "/a?b=//evil.com"):
        assert on_this_server(here), here


def test_the_redirect_stays_on_this_server_for_hostile_paths():
    guard = Guard.of(token=TOKEN)
    locations = {}
    for target in HOSTILE_TARGETS:
        if b"%0D" in target or b"%0A" in target:
            continue  # refused (below)
        locations[target] = assert_redirected_on_this_server(guard, wire_scope(target))
    for path in HOSTILE_PATHS:
        if "\r" not in path and "\n" not in path:
            assert_redirected_on_this_server(guard, scope_of(path))
    assert locations[b"/%5Cevil.com"] == locations[b"/\\evil.com"] == "/%5Cevil.com"
    assert locations[b"//evil.com"] == "/evil.com" and locations[b"/%2F%2Fevil.com"] == "/%2F%2Fevil.com"
    assert locations[b"http://evil.com/"] == "/http://evil.com/"


def test_the_redirect_keeps_the_rest_of_the_query():
    guard = Guard.of(token=TOKEN)
    scope = wire_scope(b"/search", b"query=a%5Cb&token=" + TOKEN.encode() + b"&mode=keyword")
    _, headers, _, _ = answer(guard, scope)
    assert headers["location"] == "/search?query=a%5Cb&mode=keyword"


# Request-targets as a client may send them: printable ASCII, and escapes of any byte.
WIRE_PIECES = st.one_of(
    st.sampled_from(["/", "//", "\\", "/\\", ".", "..", "%", "%2F", "%5C", "%2e", "?", "#", ":", "@", "evil.com"]),
    st.binary(min_size=1, max_size=3).map(lambda data: "".join(f"%{byte:02X}" for byte in data)),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=4),
)
WIRE_TARGETS = st.lists(WIRE_PIECES, max_size=8).map(lambda pieces: "".join(pieces).split("?")[0].encode())
DECODED_PATHS = st.text(
    st.one_of(st.sampled_from("/\\\t\r\n \x00\x0b\x0c\x7f.%:@#?\u3002\uff0f\u2028"), st.characters()), max_size=16
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=WIRE_TARGETS)
def test_any_path_from_the_wire_is_redirected_on_this_server_or_refused(target):
    scope = wire_scope(target)
    if "\r" in scope["path"] or "\n" in scope["path"]:
        assert_line_break_refused(*answer(Guard.of(token=TOKEN), scope)[:3])
    else:
        assert_redirected_on_this_server(Guard.of(token=TOKEN), scope)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=DECODED_PATHS, with_raw_path=st.booleans())
def test_any_decoded_path_is_redirected_on_this_server_or_refused(path, with_raw_path):
    raw = quote(path.encode("utf-8", "surrogatepass"), safe="/\\:@!$&'()*+,;=~").encode() if with_raw_path else None
    scope = scope_of(path, raw)
    if "\r" in path or "\n" in path:
        assert_line_break_refused(*answer(Guard.of(token=TOKEN), scope)[:3])
    else:
        assert_redirected_on_this_server(Guard.of(token=TOKEN), scope)


@settings(max_examples=300, deadline=None)
@given(path=DECODED_PATHS, raw=st.one_of(st.none(), st.binary(max_size=24)))
def test_same_path_is_always_one_ascii_path_of_this_server(path, raw):
    location = same_path({"path": path, "raw_path": raw})
    assert location.isascii() and location.isprintable() and " " not in location and "\\" not in location
    assert location.startswith("/") and not location.startswith("//")
    assert is_header_value(location.encode("ascii")) and on_this_server(location)


@pytest.mark.skipif(shutil.which("node") is None, reason="node (a WHATWG URL parser) is not installed")
def test_a_browsers_url_parser_keeps_every_location_on_this_server():
    """Node's URL is the WHATWG parser that browsers implement: every Location resolves to this server."""
    locations = [same_path({"path": unquote(target.decode()), "raw_path": target}) for target in HOSTILE_TARGETS]
    locations += [same_path({"path": path}) for path in HOSTILE_PATHS]
    script = (
        "const locations = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        f"console.log(JSON.stringify(locations.map(l => new URL(l, {json.dumps(BASE)}).host)));"
    )
    hosts = subprocess.run(
        ["node", "-e", script],
        input=json.dumps(locations + ["/\\evil.com"]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    *ours, old = json.loads(hosts.stdout)
    assert old == "evil.com"  # the Location the guard used to send for /%5Cevil.com
    assert set(ours) == {"127.0.0.1:8001"}, [location for location, host in zip(locations, ours) if host != ours[0]]


@pytest.mark.parametrize("path", ["/a\r\nb", "/a\nb", "/a\rb", "/\r\n", "/document/1\n", "\n//evil.com"])
@pytest.mark.parametrize("guard", [Guard.of(token=TOKEN), Guard.of()], ids=["with a token", "without one"])
@pytest.mark.parametrize(
    "query, extra",
    [
        (b"token=" + TOKEN.encode(), {}),  # a browser signing in: the redirect would carry the line break
        (b"", {"authorization": f"Bearer {TOKEN}"}),
        (b"", {"accept": "application/json"}),
    ],
    ids=["url token", "bearer", "no token"],
)
def test_a_line_break_in_a_path_is_a_clean_400(path, guard, query, extra):
    raw = quote(path.encode()).encode()
    status, headers, body, reached = answer(guard, scope_of(path, raw, query, **extra))
    assert not reached
    assert_line_break_refused(status, headers, body)


def test_a_websocket_with_a_line_break_in_its_path_is_closed():
    sent: list[dict] = []

    async def app(scope, receive, send) -> None:
        raise AssertionError("reached the app")

    async def receive() -> dict:
        return {"type": "websocket.connect"}

    async def send(message: dict) -> None:
        sent.append(message)

    async def call() -> None:
        scope = {**scope_of("/a\nb", b"/a%0Ab", b""), "type": "websocket"}
        await Guard.of().wrap(app)(scope, receive, send)

    asyncio.run(call())
    assert sent == [{"type": "websocket.close", "code": 1008}]


async def test_datasette_answers_a_line_break_in_a_path_with_the_error_body(sample_datasette):
    """The plugin's own guard, under plain ``datasette`` and ``archivist serve --no-token`` alike."""
    for url in ("/a%0D%0Ab", "/document/1%0A", "/archive/documents%0D"):
        response = await sample_datasette.client.get(url)
        assert_line_break_refused(response.status_code, dict(response.headers), response.content)


# --- against a real server ----------------------------------------------------------------


def raw_request(port: int, target: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """A GET of ``target`` exactly as given (no client tidies it), over a fresh connection."""
    lines = [b"GET " + target + b" HTTP/1.1", b"Host: 127.0.0.1:%d" % port, b"Connection: close"]
    lines += [f"{name}: {value}".encode("latin-1") for name, value in headers.items()]
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        connection.sendall(b"\r\n".join(lines) + b"\r\n\r\n")
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    assert received, f"no answer to {target!r}: the connection was dropped"
    reader = h11.Connection(h11.CLIENT)  # reads the answer, chunks and all, once told a request was sent
    reader.send(h11.Request(method="GET", target="/", headers=[("host", "127.0.0.1")]))
    reader.send(h11.EndOfMessage())
    reader.receive_data(received)
    reader.receive_data(b"")
    response, body = reader.next_event(), b""
    while isinstance(event := reader.next_event(), h11.Data):
        body += event.data
    assert isinstance(response, h11.Response) and isinstance(event, h11.EndOfMessage), (response, event)
    answered = {name.decode().lower(): value.decode("latin-1") for name, value in response.headers}
    return response.status_code, answered, body


@pytest.fixture
def launched(tmp_path: Path):
    with launcher(tmp_path) as start:
        yield start


@pytest.mark.parametrize("command", [("serve", "--no-index"), ("mcp", "--http")], ids=["serve", "mcp --http"])
def test_a_real_server_redirects_on_itself_and_refuses_line_breaks_cleanly(launched, sample_workspace, command):
    server = launched(command[0], str(sample_workspace), *command[1:])
    page = {"accept": "text/html"}
    token = server.token.encode()
    for target, location in (
        (b"/%5Cevil.com", "/%5Cevil.com"),
        (b"/\\evil.com", "/%5Cevil.com"),
        (b"/%5C%5Cevil.com", "/%5C%5Cevil.com"),
        (b"//evil.com", "/evil.com"),
        (b"/%09/evil.com", "/%09/evil.com"),
    ):
        status, headers, _ = raw_request(server.port, target + b"?token=" + token, page)
        assert (status, headers.get("location")) == (302, location), target
        assert on_this_server(headers["location"])
    for target, headers in (
        (b"/a%0D%0Ab?token=" + token, page),  # the redirect that used to fail in h11 and drop the connection
        (b"/a%0Ab?token=" + token, page),
        (b"/a%0D%0Ab", server.headers),
        (b"/a%0Db", {}),
    ):
        assert_line_break_refused(*raw_request(server.port, target, headers))
    for target in (b"/a\rb?token=" + token, b"/a\nb?token=" + token):
        status, _, body = raw_request(server.port, target, page)  # uvicorn refuses such a request line itself
        assert status == 400 and b"Traceback" not in body
    assert raw_request(server.port, b"/%5Cevil.com?token=" + token, page)[0] == 302  # it still answers
    assert "Traceback" not in server.output() and "Exception" not in server.output(), server.output()
