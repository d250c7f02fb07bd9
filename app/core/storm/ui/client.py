"""The Storm UI's REST API over HTTP: one request with one total deadline, credentials, redirects.

`StormUIClient.get` sends one GET with the standard library's HTTP client and decodes the
JSON reply under the readers' limits: one deadline covers connecting, the headers and the
body (a reply that drips is cut), redirects are followed only to the same scheme, host and
port (credentials are never sent elsewhere; another host or a loop is named), basic auth or
a bearer token, TLS verification on. Every failure is a :class:`StormUIError`: one line
naming the URL and what went wrong. What the replies mean is app/core/storm/ui/reader.py.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from http.client import HTTPException, HTTPMessage, HTTPResponse, IncompleteRead
from typing import IO, Any

from pydantic import BaseModel

from app.core.errors import InternalError
from app.core.formats import FormatError
from app.core.topology import Problem, one_line

DEFAULT_TIMEOUT_S = 10.0
MAX_REPLY_BYTES = 20_000_000
ENV_USER, ENV_PASSWORD, ENV_TOKEN = "STORMBOUND_UI_USER", "STORMBOUND_UI_PASSWORD", "STORMBOUND_UI_TOKEN"


class StormUIError(FormatError):
    """The Storm UI could not be read; `str()` is one line naming the URL and the problem."""

    def __init__(self, where: str, message: str):
        self.where = where
        self.message = message
        super().__init__([Problem(where, message)])

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


class Credentials(BaseModel):
    """Basic auth (user and password) or a bearer token; from options, else the environment."""

    user: str | None = None
    password: str | None = None
    token: str | None = None

    @classmethod
    def resolve(cls, user: str | None = None, password: str | None = None, token: str | None = None,
                environ: Mapping[str, str] | None = None) -> Credentials:
        env = os.environ if environ is None else environ
        if user and ":" in user and password is None:
            user, password = user.split(":", 1)
        return cls(user=user or env.get(ENV_USER) or None,
                   password=password if password is not None else env.get(ENV_PASSWORD),
                   token=token or env.get(ENV_TOKEN) or None)

    def header(self) -> str | None:
        if self.token:
            return f"Bearer {self.token}"
        if self.user:
            raw = f"{self.user}:{self.password or ''}".encode()
            return "Basic " + base64.b64encode(raw).decode("ascii")
        return None


class _OtherHost(InternalError):
    """A redirect to another scheme, host or port: not followed (the credentials would go there)."""

    def __init__(self, url: str):
        super().__init__(url)
        self.url = url


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follow redirects on the same scheme, host and port; a redirect elsewhere is named, not followed."""

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                         headers: HTTPMessage, newurl: str) -> urllib.request.Request | None:
        old, moved = urllib.parse.urlsplit(req.full_url), urllib.parse.urlsplit(newurl)
        if (old.scheme, old.netloc) != (moved.scheme, moved.netloc):
            raise _OtherHost(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class _Connections:
    """The sockets of the request under way, so that a deadline can cut them (a slow drip). The socket
    itself is kept: over HTTP/1.1 urllib detaches it from the connection once the headers are in, and
    closing the connection then waits for the reader's lock (the drip would hold it for ever)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []

    def add(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.append(sock)

    def abort(self) -> None:
        """Cut every socket: a read blocked in another thread returns at once. Never blocks."""
        with self._lock:
            socks, self._open = self._open, []
        for sock in socks:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()


def _tracked(base: type[http.client.HTTPConnection], connections: _Connections) -> Any:
    class Tracked(base):  # type: ignore[misc, valid-type]  # a subclass of the class urllib picked
        def connect(self) -> None:
            super().connect()
            if self.sock is not None:
                connections.add(self.sock)
    return Tracked


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, connections: _Connections):
        super().__init__()
        self.connections = connections

    def http_open(self, req: urllib.request.Request) -> HTTPResponse:
        return self.do_open(_tracked(http.client.HTTPConnection, self.connections), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, connections: _Connections, context: ssl.SSLContext):
        super().__init__(context=context)
        self.connections = connections
        self.context = context

    def https_open(self, req: urllib.request.Request) -> HTTPResponse:
        return self.do_open(_tracked(http.client.HTTPSConnection, self.connections), req,
                            context=self.context)


class StormUIClient:
    """GETs JSON from a Storm UI; every failure becomes one StormUIError line."""

    def __init__(self, url: str, credentials: Credentials | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
                 cafile: str | None = None, max_bytes: int = MAX_REPLY_BYTES):
        parts = urllib.parse.urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise StormUIError(url, "not a Storm UI address: expected http://HOST:PORT or https://HOST:PORT")
        self.base = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
        self.credentials = credentials or Credentials()
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        try:
            context = ssl.create_default_context(cafile=cafile)
        except (OSError, ssl.SSLError) as err:
            raise StormUIError(cafile or url, f"cannot read the CA file: {err}") from None
        self._connections = _Connections()
        handlers: list[Any] = [_SameOriginRedirects(), _HTTPHandler(self._connections),
                               _HTTPSHandler(self._connections, context)]
        if parts.hostname in ("127.0.0.1", "localhost", "::1"):
            handlers.append(urllib.request.ProxyHandler({}))  # a local UI is never behind the proxy
        self._opener = urllib.request.build_opener(*handlers)

    def url(self, path: str, params: Mapping[str, str] | None = None) -> str:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        return f"{self.base}{path}{query}"

    def get(self, path: str, params: Mapping[str, str] | None = None) -> Any:
        url = self.url(path, params)
        request = urllib.request.Request(url, headers={"Accept": "application/json",
                                                       "User-Agent": "stormbound"})
        auth = self.credentials.header()
        if auth:
            request.add_header("Authorization", auth)
        body, kind = self._within_deadline(url, request, bool(auth))
        if len(body) > self.max_bytes:
            raise StormUIError(url, f"the reply is larger than {self.max_bytes // 1_000_000} MB")
        from app.core.formats.limits import FormatError, JsonLimitError, decode_json, decode_utf8

        try:
            text = decode_utf8(body)
        except FormatError as err:
            raise StormUIError(url, f"the reply {err.problems[0].message}") from None
        if not text.strip():
            raise StormUIError(url, "the reply is empty")

        try:  # the readers' limits: nesting depth, finite numbers, integer digits, no duplicate keys (docs/limits.md)
            return decode_json(text)
        except JsonLimitError as err:
            raise StormUIError(url, f"the reply: {err}") from None
        except json.JSONDecodeError as err:
            if kind == "application/json" and err.pos >= len(text.rstrip()) - 1:
                raise StormUIError(url, "the reply was cut short (incomplete JSON)") from None
            if kind != "application/json":
                raise StormUIError(url, f"the reply is {kind}, not JSON: is {self.base} a Storm UI?") from None
            raise StormUIError(url, f"the reply is not valid JSON: {err.msg} at character {err.pos}") from None

    def _within_deadline(self, url: str, request: urllib.request.Request, sent_auth: bool) -> tuple[bytes, str]:
        """(body, content type) of one request, all of it (connecting, headers, body, redirects) within
        `timeout_s`: the request runs on a helper thread; past the deadline its connection is cut."""
        found: dict[str, Any] = {}

        def fetch() -> None:
            try:
                found["reply"] = self._fetch(url, request, sent_auth)
            except BaseException as err:  # noqa: BLE001 - handed to the caller's thread as it is
                found["error"] = err

        worker = threading.Thread(target=fetch, name="storm-ui-request", daemon=True)
        deadline = time.monotonic() + self.timeout_s
        worker.start()
        try:
            while worker.is_alive() and time.monotonic() < deadline:
                worker.join(min(0.1, max(0.0, deadline - time.monotonic())))
        except BaseException:  # Ctrl+C: the request is cut, not left reading
            self._connections.abort()
            raise
        if worker.is_alive():
            self._connections.abort()
            worker.join(2)
            raise StormUIError(url, f"no answer within {self.timeout_s:g} s for the whole request (connecting, "
                                    "headers and body; --timeout S)")
        self._connections.abort()  # nothing is kept open between requests
        if "error" in found:
            raise found["error"]
        reply: tuple[bytes, str] = found["reply"]
        return reply

    def _fetch(self, url: str, request: urllib.request.Request, auth: bool) -> tuple[bytes, str]:
        try:
            with self._opener.open(request, timeout=self.timeout_s) as reply:
                body = reply.read(self.max_bytes + 1)
                kind = reply.headers.get_content_type()
        except _OtherHost as err:
            moved = urllib.parse.urlsplit(err.url)
            raise StormUIError(url, f"redirected to another host ({one_line(moved.scheme + '://' + moved.netloc)}): "
                                    "not followed; give that address if it is the Storm UI") from None
        except urllib.error.HTTPError as err:
            raise StormUIError(url, _http_problem(err, bool(auth))) from None
        except urllib.error.URLError as err:
            raise StormUIError(url, _network_problem(err.reason, self.timeout_s)) from None
        except IncompleteRead as err:
            raise StormUIError(url, f"the reply was cut short ({len(err.partial)} bytes, "
                                    f"{err.expected} more expected)") from None
        except TimeoutError:
            raise StormUIError(url, f"no answer within {self.timeout_s:g} s") from None
        except (ConnectionError, HTTPException, OSError) as err:
            raise StormUIError(url, f"the connection failed: {one_line(str(err)) or type(err).__name__}") from None
        return body, kind


def _http_problem(err: urllib.error.HTTPError, sent_auth: bool) -> str:
    detail = ""
    try:
        body = err.read(4096).decode("utf-8", errors="replace")
        data = json.loads(body)
        if isinstance(data, dict):
            detail = str(data.get("errorMessage") or data.get("error") or "").strip().splitlines()[0][:200]
    except Exception:  # noqa: BLE001 - the status line alone still says what happened
        detail = ""
    if err.code == 401:
        how = "the credentials were refused" if sent_auth else \
            f"give --user (password in ${ENV_PASSWORD}) or --token (or ${ENV_TOKEN})"
        return f"401 Unauthorized: {how}"
    if err.code == 403:
        return "403 Forbidden: this user may not read it"
    if err.code == 404:
        return "404 Not Found: no Storm UI REST API at this address"
    if 300 <= err.code < 400 and "is not allowed" in str(err.reason):  # urllib's refusal of file://, data:...
        moved = urllib.parse.urlsplit(err.headers.get("Location", "") if err.headers else "")
        return one_line(f"HTTP {err.code}: redirected to a {moved.scheme or 'non-HTTP'}: address, not followed "
                        "(a Storm UI redirects only to http or https)")
    if 300 <= err.code < 400 and "infinite loop" in str(err.reason):
        return f"HTTP {err.code}: a redirect loop (the address redirects back to itself)"
    if 300 <= err.code < 400:
        return f"HTTP {err.code}: too many redirects"
    return one_line(f"HTTP {err.code} {err.reason}" + (f": {detail}" if detail else ""))


def _network_problem(reason: Any, timeout_s: float) -> str:
    if isinstance(reason, ssl.SSLCertVerificationError):
        return f"the TLS certificate is not trusted ({reason.verify_message}); give --cacert FILE"
    if isinstance(reason, ssl.SSLError):
        return f"TLS failed: {reason.reason or reason}"
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return f"no answer within {timeout_s:g} s"
    if isinstance(reason, ConnectionRefusedError):
        return "cannot connect: connection refused (is the Storm UI running there?)"
    if isinstance(reason, socket.gaierror):
        return "cannot resolve the host name"
    text = getattr(reason, "strerror", None) or str(reason)
    return f"cannot connect: {text}"
