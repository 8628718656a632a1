"""Typed errors raised by the Dossier client.

Every failure of an API call raises a subclass of :class:`APIError`:

* an error envelope from the server is mapped by its ``code`` (falling back to
  the HTTP status) onto one of the classes below;
* a network failure that outlived the retries is an :class:`APIConnectionError`
  (``status`` and ``code`` are ``None``-ish, see the class);
* a ``202`` that was still pending when the polling deadline passed is a
  :class:`PollTimeoutError`.

Misuse of the library itself (no API key, mixing the two forms of ``search``)
raises the built-in :class:`ValueError` before anything is sent.
"""

from __future__ import annotations

import datetime
import json
import re
import time
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional

from ._json import as_dict, dict_list, opt_str

if TYPE_CHECKING:  # pragma: no cover
    from ._models import BatchResult, SearchResult

__all__ = [
    "APIError",
    "APIConnectionError",
    "AuthenticationError",
    "InsufficientCreditsError",
    "RateLimitError",
    "ValidationError",
    "NotFoundError",
    "ConflictError",
    "UnavailableError",
    "PollTimeoutError",
    "SearchTimeoutError",
    "SignatureVerificationError",
    "error_from_envelope",
    "error_from_response",
]


class APIError(Exception):
    """Base class of every error the client raises for an API call.

    Attributes:
        status: the HTTP status (``None`` for a connection failure).
        code: the envelope's ``error.code`` such as ``"validation_error"``
            (``None`` when the body was not an error envelope).
        message: the envelope's ``error.message`` (or a description).
        request_id: the response's request id (``X-Request-Id``), if any.
        details: the envelope's ``error.details`` (``[{"field", "issue"}]``);
            an empty list when there were none.
        body: the decoded JSON body (``None`` if it was not JSON).
        raw_body: the undecoded response body as text (``""`` when none).
        headers: the response headers, with lower-case names.
    """

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: Optional[str] = None,
        request_id: Optional[str] = None,
        details: Optional[List[Dict[str, Any]]] = None,
        body: Any = None,
        raw_body: str = "",
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.request_id = request_id
        self.details: List[Dict[str, Any]] = list(details or [])
        self.body = body
        self.raw_body = raw_body
        self.headers: Dict[str, str] = dict(headers or {})

    def __str__(self) -> str:
        parts: List[str] = []
        if self.status is not None:
            parts.append(str(self.status))
        if self.code:
            parts.append(self.code)
        prefix = " ".join(parts)
        text = f"{prefix}: {self.message}" if prefix else self.message
        if self.request_id:
            text += f" (request_id={self.request_id})"
        return text

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, "
            f"message={self.message!r}, request_id={self.request_id!r})"
        )


class APIConnectionError(APIError):
    """The server could not be reached, or the connection failed or timed out,
    on every attempt (after ``max_retries`` retries). ``status``, ``code`` and
    ``request_id`` are ``None``; the last low-level exception is ``__cause__``
    (and ``cause``)."""

    def __init__(self, message: str, *, cause: Optional[BaseException] = None) -> None:
        super().__init__(message)
        self.cause = cause


class AuthenticationError(APIError):
    """401: ``unauthorized`` (no key, unknown or revoked key) or
    ``invalid_credentials`` (wrong e-mail or password at login)."""


class InsufficientCreditsError(APIError):
    """402 ``insufficient_credits``: the balance is below the lookup's cost;
    nothing was charged. ``credits_remaining`` comes from ``X-Credits-Remaining``."""

    @property
    def credits_remaining(self) -> Optional[int]:
        return parse_count(self.headers.get("x-credits-remaining"))


class RateLimitError(APIError):
    """429 ``rate_limited``. ``retry_after`` is the ``Retry-After`` header in
    seconds (``None`` if absent). Raised only once the retries are used up."""

    @property
    def retry_after(self) -> Optional[float]:
        return parse_retry_after(self.headers.get("retry-after"))


class ValidationError(APIError):
    """400 ``validation_error`` or ``invalid_json``. ``details`` lists each
    offending field as ``{"field": ..., "issue": ...}``."""


class NotFoundError(APIError):
    """404 ``not_found``: an unknown search id, key id or route."""


class ConflictError(APIError):
    """409 ``email_taken`` or ``idempotency_conflict``."""


class UnavailableError(APIError):
    """503 ``unavailable``: a backing service is down, a queue is saturated, or
    the lookup itself failed (then ``search_id`` names it). Nothing was charged.
    Raised only once the retries are used up."""

    @property
    def retry_after(self) -> Optional[float]:
        return parse_retry_after(self.headers.get("retry-after"))

    @property
    def search_id(self) -> Optional[str]:
        return opt_str(as_dict(self.body).get("search_id"))


class PollTimeoutError(APIError):
    """A lookup (or a batch) was still pending when the polling deadline
    (``poll_timeout``) passed. The work goes on server-side and its credits stay
    reserved: fetch it later with ``client.get_search(err.search_id)`` (or
    ``client.get_batch(err.batch_id)``). ``search`` is the last pending answer:
    a :class:`~dossier.SearchResult`, or a :class:`~dossier.BatchResult` for a
    batch (then ``search_id`` is ``None``)."""

    def __init__(self, message: str, *, search: "SearchResult | BatchResult") -> None:
        super().__init__(
            message,
            status=search.http_status,
            code=None,
            request_id=search.request_id,
            body=search.raw,
            headers=search.headers,
        )
        self.search = search
        self.search_id: Optional[str] = opt_str(search.raw.get("search_id"))
        self.batch_id: Optional[str] = opt_str(search.raw.get("batch_id"))


SearchTimeoutError = PollTimeoutError
"""Deprecated name of :class:`PollTimeoutError` (the same class, so either catches it), kept for 0.1.0 code."""


class SignatureVerificationError(APIError):
    """A webhook delivery failed :meth:`dossier.Webhook.verify`: the
    ``Dossier-Signature`` header is missing or malformed, no ``v1`` signature
    matches, its timestamp is outside the tolerance, or the payload is not a
    JSON object. ``status`` and ``code`` are ``None``; answer the delivery with
    a 4xx and do not act on it."""


_BY_CODE = {
    "unauthorized": AuthenticationError,
    "invalid_credentials": AuthenticationError,
    "insufficient_credits": InsufficientCreditsError,
    "rate_limited": RateLimitError,
    "validation_error": ValidationError,
    "invalid_json": ValidationError,
    "not_found": NotFoundError,
    "email_taken": ConflictError,
    "idempotency_conflict": ConflictError,
    "unavailable": UnavailableError,
}

_BY_STATUS = {
    # As in the JavaScript, Ruby and PHP clients: a 400 without the envelope (a proxy's) is a validation error.
    400: ValidationError,
    401: AuthenticationError,
    402: InsufficientCreditsError,
    404: NotFoundError,
    409: ConflictError,
    429: RateLimitError,
    503: UnavailableError,
}


def error_from_response(status: int, headers: Mapping[str, str], raw_body: str) -> APIError:
    """Build the typed error for a non-2xx response (or a 2xx that is not JSON)."""
    body: Any = None
    try:
        body = json.loads(raw_body) if raw_body else None
    except ValueError:
        body = None
    if isinstance(body, dict):
        envelope = as_dict(body)
        return error_from_envelope(
            envelope,
            status=status,
            request_id=opt_str(envelope.get("request_id")) or headers.get("x-request-id"),
            raw_body=raw_body,
            headers=headers,
        )
    message = f"HTTP {status}: unexpected response body {raw_body[:200]!r}" if raw_body else f"HTTP {status}"
    cls = _BY_STATUS.get(status) or APIError
    return cls(
        message,
        status=status,
        request_id=headers.get("x-request-id"),
        body=body,
        raw_body=raw_body,
        headers=headers,
    )


def error_from_envelope(
    envelope: Dict[str, Any],
    *,
    status: Optional[int] = None,
    request_id: Optional[str] = None,
    raw_body: str = "",
    headers: Optional[Mapping[str, str]] = None,
) -> APIError:
    """The typed error for an error envelope ``{"status": "error", "error":
    {"code", "message", "details"?}}``: of a response, or of one item of a
    batch (then ``status`` is ``None`` and the class follows the code alone)."""
    err = as_dict(envelope.get("error"))
    code = opt_str(err.get("code"))
    message = opt_str(err.get("message")) or (f"HTTP {status}" if status is not None else "error")
    cls = _BY_CODE.get(code or "") or (_BY_STATUS.get(status) if status is not None else None) or APIError
    return cls(
        message,
        status=status,
        code=code,
        request_id=request_id,
        details=dict_list(err.get("details")),
        body=envelope,
        raw_body=raw_body,
        headers=headers,
    )


# Retry-After (RFC 9110 section 10.2.3), read the same way by the four Dossier clients: delay-seconds
# (a decimal fraction tolerated) or an HTTP-date in one of its three forms, case-sensitive, always GMT.
RETRY_AFTER_CAP = 86400.0  # a longer Retry-After (seconds) is read as this: one day
_DELAY_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_TIME = r"([0-9]{2}):([0-9]{2}):([0-9]{2})"
_IMF_FIXDATE = re.compile(rf"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{{2}}) ({_MONTHS}) ([0-9]{{4}}) {_TIME} GMT")
_RFC850_DATE = re.compile(
    rf"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([0-9]{{2}})-({_MONTHS})-([0-9]{{2}}) {_TIME} GMT"
)
_ASCTIME_DATE = re.compile(rf"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ({_MONTHS}) ([0-9]{{2}}| [0-9]) {_TIME} ([0-9]{{4}})")


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """``Retry-After`` as seconds to wait, or ``None`` when absent or unreadable.

    Delay-seconds (``"120"``; a decimal fraction such as ``"1.5"`` is tolerated) or an HTTP-date
    (``"Tue, 24 Nov 2026 14:00:30 GMT"``, or the obsolete RFC 850 and asctime forms) counted from
    ``now`` (a past date is ``0``), capped at :data:`RETRY_AFTER_CAP` (one day). Anything else, such
    as ``"-5"``, ``"1e3"`` or an RFC 3339 time, is garbage: ``None``, so a retry waits its backoff
    and a poll its interval. The JavaScript, Ruby and PHP clients read it the same way."""
    if value is None:
        return None
    value = value.strip(" \t")
    if _DELAY_SECONDS.fullmatch(value):
        return min(float(value), RETRY_AFTER_CAP)
    when = _http_date(value, now)
    if when is None:
        return None
    return min(max(0.0, when - (time.time() if now is None else now)), RETRY_AFTER_CAP)


def _http_date(value: str, now: Optional[float]) -> Optional[float]:
    """An HTTP-date (RFC 9110 section 5.6.7) as a Unix time, or ``None``."""
    match = _IMF_FIXDATE.fullmatch(value)
    if match:
        day, month, year, hour, minute, second = match.groups()
    else:
        match = _RFC850_DATE.fullmatch(value)
        if match:
            day, month, yy, hour, minute, second = match.groups()
            # Two digits: the year within 50 years from now, else the century before.
            this_year = time.gmtime(time.time() if now is None else now).tm_year
            year_n = this_year - this_year % 100 + int(yy)
            year = str(year_n - 100 if year_n > this_year + 50 else year_n)
        else:
            match = _ASCTIME_DATE.fullmatch(value)
            if not match:
                return None
            month, day, hour, minute, second, year = match.groups()
    try:
        when = datetime.datetime(
            int(year), _MONTHS.split("|").index(month) + 1, int(day), int(hour), int(minute), int(second),
            tzinfo=datetime.timezone.utc,
        )
    except ValueError:  # no such day or time (30 Feb, 24:00:00)
        return None
    return when.timestamp()


_COUNT = re.compile(r"[0-9]+")


def parse_count(value: Optional[str]) -> Optional[int]:
    """A count header (``X-Credits-Spent``, ``X-Credits-Remaining``): a whole number of ASCII digits,
    surrounding spaces ignored; anything else (``-1``, ``+7``, ``1.5``, ``1e2``) is ``None``. As in the
    JavaScript, Ruby and PHP clients."""
    if value is None:
        return None
    value = value.strip(" \t")
    return int(value) if _COUNT.fullmatch(value) else None
