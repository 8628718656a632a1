"""A scripted HTTP server on 127.0.0.1 for the unit tests (no network beyond loopback)."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

# A scripted answer: (status, JSON body or raw text, extra headers), or DROP to
# close the connection without answering.
Answer = Tuple[int, Any, Dict[str, str]]
DROP = "drop"


class Recorded:
    def __init__(self, method: str, path: str, headers: Dict[str, str], raw: bytes) -> None:
        self.method = method
        self.path = path
        self.headers = headers  # lower-case names
        self.raw = raw
        self.json: Any = json.loads(raw) if raw else None

    def __repr__(self) -> str:
        return f"<{self.method} {self.path} {self.json!r}>"


def answer(status: int, body: Any = None, **headers: str) -> Answer:
    """``answer(200, {...}, Retry_After="1")``: underscores in header names become dashes."""
    return (status, body, {k.replace("_", "-"): v for k, v in headers.items()})


def error(status: int, code: str, message: str = "boom", details: Optional[list] = None,
          request_id: str = "req_test", **headers: str) -> Answer:
    err: Dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        err["details"] = details
    return answer(status, {"status": "error", "error": err, "request_id": request_id}, **headers)


def success(search_id: str = "srch_1", results: Optional[list] = None, credits: int = 9,
            **headers: str) -> Answer:
    body = {"status": "success", "search_id": search_id, "results": results or [],
            "credits_remaining": credits, "sources": [{"provider": "p", "outcome": "ok", "took_ms": 1}]}
    return answer(200, body, **headers)


def pending(search_id: str = "srch_1", credits: int = 9, retry_after: str = "0.02") -> Answer:
    return answer(202, {"status": "pending", "search_id": search_id, "credits_remaining": credits},
                  Location=f"/v1/searches/{search_id}", Retry_After=retry_after)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # dropped connections are deliberate


class FakeServer:
    """Routes map ``(METHOD, path)`` to a list of answers, served in order; the
    last one repeats. Every request is recorded in ``requests``."""

    def __init__(self, port: int = 0) -> None:
        self.requests: List[Recorded] = []
        self._routes: Dict[Tuple[str, str], List[Union[Answer, str]]] = {}
        self._lock = threading.Lock()
        self._port = port
        self._httpd: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    def route(self, method: str, path: str, *answers: Union[Answer, str]) -> "FakeServer":
        self._routes[(method, path)] = list(answers)
        return self

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def calls(self, method: str, path: str) -> List[Recorded]:
        return [r for r in self.requests if r.method == method and r.path == path]

    def start(self) -> "FakeServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                rec = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
                with server._lock:
                    server.requests.append(rec)
                    queue = server._routes.get((self.command, self.path))
                    if not queue:
                        script: Union[Answer, str] = error(404, "not_found", "no such route")
                    else:
                        script = queue.pop(0) if len(queue) > 1 else queue[0]
                if script == DROP:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                assert not isinstance(script, str)
                status, body, headers = script
                payload = body.encode() if isinstance(body, str) else (
                    b"" if body is None else json.dumps(body).encode())
                self.send_response(status)
                if not isinstance(body, str):
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("X-Request-Id", "req_header")
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = _handle

        self._httpd = _QuietServer(("127.0.0.1", self._port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "FakeServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def free_port() -> int:
    """A loopback port nothing listens on (connections to it are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SleepRecorder:
    """Stands in for time.sleep: records each delay and sleeps it for real
    (the tests keep delays tiny). ``on_first`` runs before the first sleep."""

    def __init__(self, on_first: Optional[Callable[[], object]] = None) -> None:
        self.delays: List[float] = []
        self._on_first = on_first

    def __call__(self, seconds: float) -> None:
        if self._on_first is not None:
            hook, self._on_first = self._on_first, None
            hook()
        self.delays.append(seconds)
        import time

        time.sleep(seconds)


class FakeClock:
    """Stands in for the transport's sleep and clock (no test measures the wall clock): a sleep
    returns at once, recorded in ``delays``, and moves ``time`` on by what it was asked for; the
    time the requests take does not move it, so a deadline is reached by the sleeps alone."""

    def __init__(self) -> None:
        self.delays: List[float] = []
        self.time = 1000.0

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        self.time += seconds

    def now(self) -> float:
        return self.time


class TrickleServer:
    """A server on 127.0.0.1 that answers every request with a complete, valid ``200`` whose
    body it sends one byte every ``interval`` seconds: each read gets data quickly, the
    whole answer takes ``len(body) * interval`` seconds. ``connections`` counts the requests."""

    def __init__(self, body: Dict[str, Any], *, interval: float = 0.05, pad_to: int = 100) -> None:
        text = json.dumps(body)
        self.payload = (text + " " * max(0, pad_to - len(text))).encode()
        self.interval = interval
        self.connections = 0
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(8)
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        import time

        with conn:
            try:
                received = b""
                while b"\r\n\r\n" not in received:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    received += chunk
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             + f"Content-Length: {len(self.payload)}\r\nConnection: close\r\n\r\n".encode())
                for i in range(len(self.payload)):
                    time.sleep(self.interval)
                    conn.sendall(self.payload[i:i + 1])
            except OSError:
                return  # the client hung up

    def stop(self) -> None:
        self._listener.close()


# An account as the gateway describes it (API.md): the fixtures' account and register answers carry it.
ACCOUNT: Dict[str, Any] = {"id": "acc_1", "email": "a@example.com", "created_at": "2026-11-24T00:00:00.000Z"}
