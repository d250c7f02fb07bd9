"""The HTTP side of the stand-in Storm UIs (tests/storm_ui_live.py, tests/storm_ui_drift.py): a JSON server on
127.0.0.1 that answers every GET with `reply(path)`, stops by itself after `lifetime` seconds, and can stop and
listen again on the same port (a cluster that goes away and comes back)."""

from __future__ import annotations

import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class _Quiet(ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        pass


class JsonStandIn:
    """`with Subclass(...) as ui: ui.url`; a subclass says what each path answers (`reply`)."""

    def __init__(self, lifetime: float) -> None:
        self.lifetime = lifetime
        self.port = 0  # 0 until the first start: any free port; then the same one again
        self.httpd: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True

    def reply(self, path: str) -> tuple[int, Any]:
        """The status and the JSON document for a GET of `path`."""
        raise NotImplementedError

    def before_reply(self) -> None:
        """Called in the request's thread before `reply` (a subclass may make requests wait there)."""

    def start(self) -> None:
        """Listen (again) on the same port."""
        ui = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                ui.before_reply()
                code, data = ui.reply(urllib.parse.urlsplit(self.path).path)
                body = json.dumps(data).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = _Quiet(("127.0.0.1", self.port), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Stop listening: requests are refused until start()."""
        httpd, self.httpd = self.httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self.thread is not None:
            self.thread.join(5)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Self:
        self.start()
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        self.stop()
