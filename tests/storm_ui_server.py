"""A stand-in Storm UI on 127.0.0.1 for tests: serves tests/data/storm-ui/ (stdlib http.server).

`StormUIServer(mode=...)` misbehaves on request: "ok", "auth" (basic auth storm:secret or
bearer token t0k3n required), "forbidden", "missing" (404 everywhere), "truncated"
(Content-Length promises more than is sent), "html" (a login page instead of JSON),
"badjson", "redirect" (every API path answers 302 to the same path under /ui/), "slow", "deep"
(the topology page nested 10,000 levels deep), "nan" and "huge" (the topology page with the
spout's `emitted` count NaN, or 1e400), "drip" (the topology page one byte every half second),
"drip-headers" (the status line and headers that slowly), "drip11" (as "drip", over HTTP/1.1 keep-alive),
"file" (every path redirects to file:///etc/passwd),
"loop" (every path redirects to
itself), "elsewhere" (a redirect to the same port under another host name), "badutf8" (a byte that
is not UTF-8 in the topology page), "badnames" (a bolt named with a newline, a NUL and a
right-to-left override), "bignum" (a bolt with 10^23 executors), "dupkeys" (the topology page
with a key twice), "saturated" (Storm 2.4.0; count executes in 5 ms, so the measured rates put it at ρ 1.00;
its Storm UI capacity 0.996; 9000 spout tuples failed in the window; a complete latency of 24.8 s; and a lag
endpoint whose Kafka lag grows by SATURATED_LAG_GROWTH tuples/s from the server's start), "fewfailures" (a healthy
page: 3 spout tuples failed of 240,003, a complete latency of 12.4 ms, count's capacity 0.420).
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "storm-ui"
TOPOLOGY_ID = "wordcount-3-1700000000"
DEEP_LEVELS = 10_000
# the number the "nan" and "huge" modes put in place of the spout's `emitted` on the topology page
BAD_NUMBERS = {"nan": b"NaN", "huge": b"1e400"}
SATURATED_LAG_GROWTH = 10  # tuples/s
SATURATED_LAG_START = 50_000


def routes() -> dict[str, str]:
    """API path -> fixture file."""
    table = {"/api/v1/topology/summary": "topology-summary.json",
             f"/api/v1/topology/{TOPOLOGY_ID}": "topology.json"}
    for comp in ("sentences", "split", "count", "report"):
        table[f"/api/v1/topology/{TOPOLOGY_ID}/component/{comp}"] = f"component-{comp}.json"
    return table


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up (the timeout test) is not an error of the stand-in


class StormUIServer:
    """Context manager: `with StormUIServer() as ui: ui.url` is http://127.0.0.1:PORT."""

    def __init__(self, mode: str = "ok"):
        self.mode = mode
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.started = time.monotonic()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                parts = urllib.parse.urlsplit(self.path)
                server.requests.append((self.path, {k: v for k, v in self.headers.items()}))
                path = parts.path
                if server.mode == "loop":
                    self.send_response(302)
                    self.send_header("Location", self.path)
                    self.end_headers()
                    return
                if server.mode == "file":
                    self.send_response(302)
                    self.send_header("Location", "file:///etc/passwd")
                    self.end_headers()
                    return
                if server.mode == "elsewhere":
                    self.send_response(302)
                    self.send_header("Location", f"http://localhost:{self.server.server_address[1]}{self.path}")
                    self.end_headers()
                    return
                if server.mode == "drip-headers":
                    for byte in b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{}":
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(0.5)
                    return
                if server.mode == "redirect" and not path.startswith("/ui/"):
                    self.send_response(302)
                    self.send_header("Location", f"/ui{self.path}")
                    self.end_headers()
                    return
                path = path.removeprefix("/ui")
                if server.mode == "auth":
                    expected = {"Basic " + base64.b64encode(b"storm:secret").decode(), "Bearer t0k3n"}
                    if self.headers.get("Authorization") not in expected:
                        return self._send(401, b'{"error": "Unauthorized"}')
                if server.mode == "forbidden":
                    return self._send(403, b"Forbidden")
                if server.mode == "missing":
                    return self._send(404, b"<html>Not Found</html>", "text/html")
                if server.mode == "html":
                    return self._send(200, b"<html><body>Please log in</body></html>", "text/html")
                if server.mode == "slow":
                    time.sleep(3)
                if server.mode == "saturated" and path == f"/api/v1/topology/{TOPOLOGY_ID}/lag":
                    lag = SATURATED_LAG_START + round(SATURATED_LAG_GROWTH * (time.monotonic() - server.started))
                    reply = {"sentences": {"spoutId": "sentences", "spoutType": "KAFKA", "spoutLagResult": {
                        "sentences-topic": {"0": {"consumerCommittedOffset": 1000, "logHeadOffset": 1000 + lag,
                                                  "lag": lag}}}}}
                    return self._send(200, json.dumps(reply).encode())
                name = routes().get(path)
                if name is None:
                    body = json.dumps({"error": "Internal Server Error",
                                       "errorMessage": f"org.apache.storm.generated.NotAliveException: {path}"})
                    return self._send(500, body.encode())
                body = (DATA / name).read_bytes()
                if server.mode == "badjson" and name != "topology-summary.json":
                    return self._send(200, b"{'spouts': [oops}", "application/json")
                if server.mode == "deep" and name == "topology.json":
                    return self._send(200, b"[" * DEEP_LEVELS + b"]" * DEEP_LEVELS)
                if server.mode in ("drip", "drip11") and name == "topology.json":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    for byte in body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(0.5)
                    return
                if server.mode == "badutf8" and name == "topology.json":
                    body = body.replace(b'"name"', b'"\xff"', 1)
                if server.mode == "badnames" and name == "topology.json":
                    body = body.replace(b'"boltId": "split"', b'"boltId": "spl\\nit\\u0000\\u202e"', 1)
                if server.mode == "bignum" and name == "component-split.json":
                    body = body.replace(b'"executors": 2', b'"executors": 100000000000000000000000', 1)
                if server.mode == "dupkeys" and name == "topology.json":
                    body = body.replace(b'"boltId": "split"', b'"boltId": "split", "boltId": "count"', 1)
                if server.mode in BAD_NUMBERS and name == "topology.json":
                    body = body.replace(b'"emitted": 24020', b'"emitted": ' + BAD_NUMBERS[server.mode], 1)
                if server.mode == "saturated" and name in ("topology.json", "component-count.json"):
                    body = body.replace(b'"executeLatency": "20.000"', b'"executeLatency": "5.000"')
                    if name == "topology.json":
                        page = json.loads(body)
                        page["stormVersion"] = "2.4.0"
                        page["spouts"][0].update({"failed": 9000, "completeLatency": "24800.000"})
                        next(b for b in page["bolts"] if b["boltId"] == "count")["capacity"] = "0.996"
                        body = json.dumps(page).encode()
                if server.mode == "fewfailures" and name == "topology.json":
                    page = json.loads(body)
                    page["spouts"][0].update({"failed": 3, "acked": 240_000, "completeLatency": "12.400"})
                    for bolt in page["bolts"]:
                        bolt["capacity"] = "0.420" if bolt["boltId"] == "count" else bolt["capacity"]
                    body = json.dumps(page).encode()
                if server.mode == "truncated" and name != "topology-summary.json":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self._send(200, body)

            def _send(self, code: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        if mode == "drip11":
            Handler.protocol_version = "HTTP/1.1"
        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> StormUIServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)
