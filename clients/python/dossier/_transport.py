"""HTTP transport: one request over http.client, with retries, backoff and error mapping."""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import socket
import ssl
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple
from urllib.parse import urlsplit

from ._errors import APIConnectionError, APIError, error_from_response, parse_retry_after
from ._json import as_dict, opt_str
from ._version import __version__

USER_AGENT = f"dossier-python/{__version__}"
DEFAULT_BASE_URL = "http://127.0.0.1:3000"
# Where the server is when no base_url is given, as the Stripe and OpenAI SDKs read their settings.
ENV_BASE_URL = "DOSSIER_BASE_URL"
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 2
DEFAULT_BACKOFF_BASE = 0.5
DEFAULT_BACKOFF_CAP = 8.0

# 429 and 503 mean the server did not act on the request, so any call may be retried.
RETRY_STATUSES = (429, 503)
# 408 request_timeout: the request did not arrive in time (the gateway's, or a proxy's); 502 and 504: a load
# balancer's or proxy's answer while a gateway restarts (the request may have been acted on). Retried only when
# the request is safe to repeat, as a connection that failed after sending is (as in the other clients).
RETRY_IF_SAFE_STATUSES = (408, 502, 504)
# A Retry-After longer than this (seconds) is not waited out: the error is raised at once.
MAX_RETRY_AFTER = 60.0
# What the gateway echoes as the answer's X-Request-Id (API.md): 1–128 of these characters; it replaces anything
# else with an id of its own, so the client refuses it rather than send an id the caller would never see again.
_REQUEST_ID = re.compile(r"[A-Za-z0-9._~:@+=/-]{1,128}")


class _ConnectionFailure(Exception):
    def __init__(self, cause: BaseException, *, sent: bool, retryable: bool = True) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.sent = sent
        self.retryable = retryable


class RawResponse:
    __slots__ = ("status", "headers", "body", "text")

    def __init__(self, status: int, headers: Dict[str, str], body: Dict[str, Any], text: str) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.text = text

    def not_a(self, expected: str) -> APIError:
        """The error for this 2xx answer when its JSON object is not ``expected`` (``"search envelope"``): the
        base :class:`APIError`, ``code`` ``None`` (it is no error envelope), as in the other three clients."""
        return APIError(
            f"HTTP {self.status} with a body that is not {'an' if expected[0] in 'aeiou' else 'a'} {expected}",
            status=self.status,
            request_id=self.headers.get("x-request-id"),
            body=self.body,
            raw_body=self.text,
            headers=self.headers,
        )


class Transport:
    def __init__(
        self,
        base_url: Optional[str] = None,
        *,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff_base: float = DEFAULT_BACKOFF_BASE,
        backoff_cap: float = DEFAULT_BACKOFF_CAP,
        sleep: Optional[Callable[[float], None]] = None,
    ) -> None:
        # The argument, else DOSSIER_BASE_URL, else the default; blank counts as none (as in the other clients).
        given = (base_url or "").strip()
        from_env = "" if given else (os.environ.get(ENV_BASE_URL) or "").strip()
        url = (given or from_env or DEFAULT_BASE_URL).rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            source = ENV_BASE_URL if from_env else "base_url"
            raise ValueError(f"{source} must be an http:// or https:// URL, got {url!r}")
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.base_url = url
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.sleep: Callable[[float], None] = sleep if sleep is not None else _sleep
        # The monotonic time in seconds that poll deadlines are counted with; tests stand in a clock.
        self.now: Callable[[], float] = time.monotonic

    # -- public ---------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Optional[Mapping[str, Any]] = None,
        api_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        safe_to_resend: bool = True,
        retry_failed_search: bool = True,
        request_id: Optional[str] = None,
        gone_on_retry: Optional[Dict[str, Any]] = None,
    ) -> RawResponse:
        """Send a request, retrying 429/503/connection failures (and a 408, 502 or 504 when
        ``safe_to_resend``), and return a 2xx response or raise the typed error.

        ``safe_to_resend=False`` (register, login, create_key, create_webhook)
        retries a connection failure only when the request never left (connect
        failed), and does not retry a 408, 502 or 504.
        ``retry_failed_search=False`` (GET of a search) does not retry a 503
        that reports the search's own failure: it will not change.
        A ``Retry-After`` over ``MAX_RETRY_AFTER`` seconds is not waited out:
        the error is raised at once. ``request_id`` is sent as ``X-Request-Id``
        on every attempt (``ValueError`` when the gateway would not echo it).
        ``gone_on_retry`` (a DELETE) is the body returned when a retry gets 404: the
        attempt whose answer was lost had deleted it. A 404 on the first attempt raises.
        """
        all_headers = {
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }
        payload: Optional[bytes] = None
        if body is not None:
            payload = _encode(body)
            all_headers["Content-Type"] = "application/json"
        if api_key is not None:
            all_headers["Authorization"] = f"Bearer {api_key}"
        if headers:
            all_headers.update(headers)
        if request_id is not None:
            all_headers["X-Request-Id"] = check_request_id(request_id)

        attempt = 0
        while True:
            try:
                status, resp_headers, text = self._send_once(method, path, payload, all_headers)
            except _ConnectionFailure as failure:
                may_retry = failure.retryable and (safe_to_resend or not failure.sent)
                if may_retry and attempt < self.max_retries:
                    self.sleep(self._backoff(attempt))
                    attempt += 1
                    continue
                tries = attempt + 1
                raise APIConnectionError(
                    f"{method} {self.base_url}{path} failed after {tries} attempt(s): "
                    f"{type(failure.cause).__name__}: {failure.cause}",
                    cause=failure.cause,
                ) from failure.cause

            retryable = status in RETRY_STATUSES or (safe_to_resend and status in RETRY_IF_SAFE_STATUSES)
            if retryable and attempt < self.max_retries:
                if retry_failed_search or not _reports_failed_search(text):
                    retry_after = parse_retry_after(resp_headers.get("retry-after"))
                    # A longer wait than we are willing to sleep: the error (with retry_after) is raised.
                    if retry_after is None or retry_after <= MAX_RETRY_AFTER:
                        # The server's Retry-After as given, else the backoff (as in the other clients).
                        self.sleep(self._backoff(attempt) if retry_after is None else retry_after)
                        attempt += 1
                        continue

            if attempt > 0 and status == 404 and gone_on_retry is not None:
                return RawResponse(status, resp_headers, gone_on_retry, text)
            if 200 <= status < 300:
                # Every answer of the API is a JSON object; anything else (a proxy's page, an empty
                # body) is an APIError, as in the other clients.
                try:
                    decoded: Any = json.loads(text) if text else None
                except ValueError:
                    decoded = None
                if isinstance(decoded, dict):
                    return RawResponse(status, resp_headers, as_dict(decoded), text)
            raise error_from_response(status, resp_headers, text)

    # -- internals ------------------------------------------------------------

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter: uniform in [0, min(cap, base * 2^attempt)]."""
        ceiling = min(self.backoff_cap, self.backoff_base * (2 ** attempt))
        return random.uniform(0, ceiling)

    def _connection(self) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(
                self._host, self._port, timeout=self.timeout, context=ssl.create_default_context()
            )
        return http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)

    def _send_once(
        self, method: str, path: str, payload: Optional[bytes], headers: Mapping[str, str]
    ) -> Tuple[int, Dict[str, str], str]:
        """One attempt. ``timeout`` bounds all of it, connecting through reading the whole body: a
        server that trickles its answer a byte at a time does not hold the call past it."""
        conn = self._connection()
        expired = threading.Event()
        connected: List[socket.socket] = []  # the socket, once open (http.client lets go of it early)
        watchdog: Optional[threading.Timer] = None
        if self.timeout is not None:
            watchdog = threading.Timer(self.timeout, _expire, (connected, expired))
            watchdog.daemon = True
            watchdog.start()
        try:
            try:
                conn.connect()
            except ssl.SSLCertVerificationError as exc:
                raise _ConnectionFailure(exc, sent=False, retryable=False) from exc
            except OSError as exc:
                raise _ConnectionFailure(exc, sent=False) from exc
            if conn.sock is not None:
                connected.append(conn.sock)
            if expired.is_set():  # connected just as the attempt ran out of time
                raise _ConnectionFailure(self._timed_out(), sent=False)
            try:
                conn.request(method, self._prefix + path, body=payload, headers=dict(headers))
                response = conn.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException) as exc:
                if expired.is_set():  # the watchdog cut the connection
                    raise _ConnectionFailure(self._timed_out(), sent=True) from exc
                raise _ConnectionFailure(exc, sent=True) from exc
            resp_headers: Dict[str, str] = {}
            for name, value in response.getheaders():
                key = name.lower()
                resp_headers[key] = f"{resp_headers[key]}, {value}" if key in resp_headers else value
            return response.status, resp_headers, data.decode("utf-8", errors="replace")
        finally:
            if watchdog is not None:
                watchdog.cancel()
            conn.close()

    def _timed_out(self) -> socket.timeout:
        return socket.timeout(f"no complete answer within the timeout of {self.timeout} s")


def _encode(body: Mapping[str, Any]) -> bytes:
    """The request body as UTF-8 JSON. What it cannot carry (a ``str`` with a lone surrogate, such as a bad
    decode or a sliced emoji leaves; ``NaN`` or ``Infinity``) is the caller's to fix: ``ValueError`` before
    anything is sent, as Ruby's ``ArgumentError`` and PHP's ``InvalidArgumentException`` are. Not the codec's
    own error, which holds the whole body (a password, for register and login) and quotes the character."""
    try:
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    except ValueError:  # UnicodeEncodeError is one too
        pass
    raise ValueError(
        "the request cannot be sent as JSON: every str in it must be valid Unicode text (no lone surrogate), "
        "and every number finite (no NaN or Infinity)"
    )


def check_request_id(value: object) -> str:
    """``value`` as an ``X-Request-Id`` the gateway echoes (1–128 of ``A-Z a-z 0-9 . _ ~ : @ + = / -``), or
    ``ValueError`` before anything is sent. As in the other three clients."""
    if not isinstance(value, str) or not _REQUEST_ID.fullmatch(value):
        raise ValueError(
            "request_id must be 1–128 of the characters A-Z a-z 0-9 . _ ~ : @ + = / - "
            f"(the gateway would not echo it), got {value!r:.80}"
        )
    return value


def _expire(connected: List[socket.socket], expired: threading.Event) -> None:
    """Ends an attempt that outlived its timeout: shutting the socket down wakes the read blocked
    on it (connecting is bounded by the socket's own timeout)."""
    expired.set()
    for sock in connected:
        try:
            # socket.socket's own shutdown, also for an SSLSocket: it only cuts the connection.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            pass


def _sleep(seconds: float) -> None:
    time.sleep(seconds)  # looked up at call time, so tests can patch time.sleep


def _reports_failed_search(text: str) -> bool:
    try:
        body = json.loads(text)
    except ValueError:
        return False
    return opt_str(as_dict(body).get("search_id")) is not None
