"""Response objects. Each keeps the decoded JSON body in ``raw`` and supports
``obj["field"]`` as a shortcut for ``obj.raw["field"]``."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Optional, TypeVar

from ._errors import APIError, error_from_envelope, parse_count, parse_retry_after
from ._json import as_dict, dict_list, opt_int, opt_str

__all__ = [
    "Response",
    "ResponseList",
    "SearchResult",
    "BatchItem",
    "BatchResult",
    "Account",
    "Registration",
    "IssuedKey",
    "ApiKey",
    "WebhookEndpoint",
    "CreatedWebhook",
    "WebhookDelivery",
    "WebhookEvent",
    "SearchHistory",
]


class _HttpAnswer:
    """What every answer of the client tells of its HTTP response: ``raw``,
    ``headers``, ``http_status``, ``request_id`` and ``rate_limit``."""

    raw: Dict[str, Any]
    headers: Dict[str, str]
    http_status: Optional[int]

    def _answered(
        self, raw: Dict[str, Any], headers: Optional[Mapping[str, str]], http_status: Optional[int]
    ) -> None:
        self.raw = raw
        self.headers = dict(headers or {})
        self.http_status = http_status

    @property
    def request_id(self) -> Optional[str]:
        return self.headers.get("x-request-id")

    @property
    def rate_limit(self) -> Dict[str, Optional[int]]:
        """The calling key's rate limit as this answer reports it: ``limit``
        (``RateLimit-Limit``, requests allowed in a burst), ``remaining``
        (``RateLimit-Remaining``, requests left in it) and ``reset``
        (``RateLimit-Reset``, seconds until it is full again). Each is a whole
        number, or ``None`` when the header is absent or not one (read as the
        credit headers are). As ``rate_limit`` in the other three clients."""
        return {
            "limit": parse_count(self.headers.get("ratelimit-limit")),
            "remaining": parse_count(self.headers.get("ratelimit-remaining")),
            "reset": parse_count(self.headers.get("ratelimit-reset")),
        }


class Response(_HttpAnswer):
    """Base of the objects returned by the client.

    Attributes:
        raw: the decoded JSON body.
        headers: the response headers, with lower-case names (empty for items
            of a list, such as the keys from ``list_keys``).
        http_status: the HTTP status (``None`` for items of a list).
        request_id: ``X-Request-Id`` of the response, if any.
        rate_limit: ``{"limit", "remaining", "reset"}`` from the
            ``RateLimit-*`` headers (see the property).
    """

    def __init__(
        self,
        raw: Dict[str, Any],
        *,
        headers: Optional[Mapping[str, str]] = None,
        http_status: Optional[int] = None,
    ) -> None:
        self._answered(raw, headers, http_status)

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.raw == self.raw  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({_redacted(self.raw)!r})"


_Item = TypeVar("_Item", bound=Response)


class ResponseList(List[_Item], _HttpAnswer):
    """What ``list_keys``, ``list_webhooks`` and ``webhook_deliveries``
    return: a ``list`` of their items, as before, that also carries the HTTP
    answer as every other result does: ``raw`` (the decoded JSON body),
    ``headers``, ``http_status``, ``request_id`` and ``rate_limit``."""

    def __init__(
        self,
        items: Iterable[_Item],
        raw: Dict[str, Any],
        *,
        headers: Optional[Mapping[str, str]] = None,
        http_status: Optional[int] = None,
    ) -> None:
        super().__init__(items)
        self._answered(raw, headers, http_status)


def _redacted(raw: Dict[str, Any]) -> Dict[str, Any]:
    """``raw`` with its secrets shortened, for printing: an ``api_key`` to its
    first 8 characters (``dsk_live…``), a webhook ``secret`` to its first 6
    (``whsec_…``), as ``repr(client)`` shows the client's key."""
    shown = dict(raw)
    if isinstance(shown.get("api_key"), str):
        shown["api_key"] = shown["api_key"][:8] + "…"
    if isinstance(shown.get("secret"), str):
        shown["secret"] = shown["secret"][:6] + "…"
    return shown


class _Settling(Response):
    """An answer that may still be pending (HTTP 202): a search or a batch,
    with the ``Idempotency-Key`` it was sent with (``None`` for a GET)."""

    def __init__(
        self,
        raw: Dict[str, Any],
        *,
        headers: Optional[Mapping[str, str]] = None,
        http_status: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> None:
        super().__init__(raw, headers=headers, http_status=http_status)
        self.status: str = str(raw.get("status", ""))
        self.credits_remaining: Optional[int] = opt_int(raw.get("credits_remaining"))
        self.idempotency_key = idempotency_key

    @property
    def replayed(self) -> bool:
        """``True`` when the server answered an earlier request with the same
        ``Idempotency-Key`` (nothing charged again)."""
        return self.headers.get("idempotent-replayed", "").lower() == "true"

    @property
    def pending(self) -> bool:
        """``True`` while the work still runs (HTTP 202)."""
        return self.status == "pending"

    @property
    def retry_after(self) -> Optional[float]:
        """``Retry-After`` of a pending answer, in seconds."""
        return parse_retry_after(self.headers.get("retry-after"))


class SearchResult(_Settling):
    """The envelope of a lookup (or of ``get_search``).

    Attributes:
        status: ``"success"``, or ``"pending"`` when the lookup still runs
            (only returned with ``wait=False``).
        search_id: ``srch_…``; fetch it again with ``client.get_search``.
        results: the result items, plain dicts as in the API reference
            (always a list; empty while pending).
        credits_remaining: the balance after this call's charge.
        sources: one ``{"provider", "outcome", "took_ms"}`` per provider tried.
        total_results: a person search: how many items passed ``min_score``
            before ``limit`` cut them (``None`` for other kinds, while pending,
            and for a person search settled before the server counted them).
        credits_spent: ``X-Credits-Spent`` (``None`` if absent).
        idempotency_key: the ``Idempotency-Key`` the lookup was sent with
            (``None`` for ``get_search``).
        replayed: ``True`` when the server answered an earlier request with the
            same ``Idempotency-Key`` (nothing charged again).

    Other envelope fields are read from ``raw`` (``result["field"]``):
    ``source_summary`` (how many ``sources`` had each outcome), and while pending ``progress``
    (``results`` found so far, ``source_summary``, ``sources_pending``,
    ``updated_at``) when the search reports it. Items may carry the optional
    fields of the API reference: ``watchlist_hits`` (person, company),
    ``officers``, ``controllers``, ``parents``, ``field_sources`` (company).
    """

    def __init__(self, raw: Dict[str, Any], **kw: Any) -> None:
        super().__init__(raw, **kw)
        self.search_id: str = str(raw.get("search_id", ""))
        self.results: List[Dict[str, Any]] = dict_list(raw.get("results"))
        self.sources: List[Dict[str, Any]] = dict_list(raw.get("sources"))
        self.total_results: Optional[int] = opt_int(raw.get("total_results"))

    @property
    def credits_spent(self) -> Optional[int]:
        return parse_count(self.headers.get("x-credits-spent"))

    def __repr__(self) -> str:
        return (
            f"SearchResult(status={self.status!r}, search_id={self.search_id!r}, "
            f"results={len(self.results)} item(s), credits_remaining={self.credits_remaining!r})"
        )


class BatchItem(SearchResult):
    """One item of a :class:`BatchResult`, in the order of the requests.

    ``status`` tells which of three it is:

    * ``"success"``: a finished lookup, with ``search_id``, ``results``,
      ``sources`` and ``credits_remaining`` as in :class:`SearchResult`;
    * ``"pending"``: a lookup still running (``search_id``; ``results`` empty);
    * ``"error"``: the item was not run or its lookup failed; ``error`` is the
      typed error (:class:`~dossier.ValidationError` for an invalid item,
      :class:`~dossier.InsufficientCreditsError` when the balance did not cover
      it, :class:`~dossier.UnavailableError` for a failed lookup, which also
      names its ``search_id``). An item in error cost nothing.
    """

    def __init__(self, raw: Dict[str, Any], **kw: Any) -> None:
        super().__init__(raw, **kw)
        self.error: Optional[APIError] = (
            error_from_envelope(raw, request_id=opt_str(raw.get("request_id")))
            if self.status == "error"
            else None
        )

    @property
    def ok(self) -> bool:
        """``True`` for a finished lookup (``status == "success"``)."""
        return self.status == "success"

    @property
    def failed(self) -> bool:
        """``True`` for an item in error (see ``error``)."""
        return self.status == "error"

    def __repr__(self) -> str:
        if self.error is not None:
            return f"BatchItem(status='error', code={self.error.code!r}, message={self.error.message!r})"
        return (
            f"BatchItem(status={self.status!r}, search_id={self.search_id!r}, "
            f"results={len(self.results)} item(s))"
        )


class BatchResult(_Settling):
    """The answer of ``client.batch`` or ``client.get_batch``.

    Attributes:
        status: ``"success"`` when every item is settled, ``"pending"`` while
            some still run (only returned with ``wait=False``, or by
            ``get_batch`` without ``wait``).
        batch_id: ``bat_…``; fetch it again with ``client.get_batch``.
        items: one :class:`BatchItem` per request, in order.
        credits_remaining: the balance after the batch's charges.
        idempotency_key: the ``Idempotency-Key`` the batch was sent with
            (``None`` for ``get_batch``).
        replayed: ``True`` when the server answered an earlier batch with the
            same ``Idempotency-Key`` (nothing charged again).
    """

    def __init__(self, raw: Dict[str, Any], **kw: Any) -> None:
        super().__init__(raw, **kw)
        self.batch_id: str = str(raw.get("batch_id", ""))
        self.items: List[BatchItem] = [BatchItem(item) for item in dict_list(raw.get("items"))]

    @property
    def errors(self) -> List[BatchItem]:
        """The items in error."""
        return [item for item in self.items if item.failed]

    def __repr__(self) -> str:
        return (
            f"BatchResult(status={self.status!r}, batch_id={self.batch_id!r}, "
            f"items={len(self.items)}, credits_remaining={self.credits_remaining!r})"
        )


class SearchHistory(Response):
    """One page of ``GET /v1/searches`` (``client.list_searches``), newest first.

    Attributes:
        searches: one dict per search: ``search_id``, ``kind``, ``status``
            (``pending``, ``succeeded`` or ``failed``), ``created_at``,
            ``completed_at``, ``credits_spent``, ``permissible_purpose``,
            ``result_count`` (no inputs or results: see ``get_search``).
        next_cursor: pass it as ``cursor`` (with the same filters) for the next
            page; ``None`` on the last page.
    """

    def __init__(self, raw: Dict[str, Any], **kw: Any) -> None:
        super().__init__(raw, **kw)
        self.searches: List[Dict[str, Any]] = dict_list(raw.get("searches"))
        self.next_cursor: Optional[str] = opt_str(raw.get("next_cursor"))

    @property
    def has_more(self) -> bool:
        """``True`` when another page follows (``next_cursor`` is set)."""
        return self.next_cursor is not None

    def __repr__(self) -> str:
        return f"SearchHistory(searches={len(self.searches)}, next_cursor={self.next_cursor!r})"


class Account(Response):
    """``GET /v1/account``: ``id``, ``email``, ``created_at``, ``credits_remaining``."""

    def __init__(self, raw: Dict[str, Any], **kw: Any) -> None:
        super().__init__(raw, **kw)
        account = as_dict(raw.get("account"))
        self.id: str = account.get("id", "")
        self.email: str = account.get("email", "")
        self.created_at: str = account.get("created_at", "")
        self.credits_remaining: Optional[int] = raw.get("credits_remaining")


class Registration(Response):
    """``Client.register``: the new account's first ``api_key`` (shown once),
    the ``account`` and the signup ``credits_remaining``."""

    def __init__(self, raw: Dict[str, Any], **kw: Any) -> None:
        super().__init__(raw, **kw)
        self.api_key: str = raw.get("api_key", "")
        self.credits_remaining: Optional[int] = raw.get("credits_remaining")
        self.account = Account(raw, headers=self.headers, http_status=self.http_status)


class IssuedKey(Response):
    """``Client.login`` and ``create_key``: a new ``api_key`` (shown once) and its ``key_id``."""

    def __init__(self, raw: Dict[str, Any], **kw: Any) -> None:
        super().__init__(raw, **kw)
        self.api_key: str = raw.get("api_key", "")
        self.key_id: str = raw.get("key_id", "")


class ApiKey(Response):
    """A key as listed by ``list_keys`` or returned by ``revoke_key`` (never the secret)."""

    def __init__(self, raw: Dict[str, Any], **kw: Any) -> None:
        super().__init__(raw, **kw)
        self.id: str = raw.get("id", "")
        self.prefix: str = raw.get("prefix", "")
        self.name: Optional[str] = raw.get("name")
        self.mode: str = raw.get("mode", "live")
        self.created_at: str = raw.get("created_at", "")
        self.last_used_at: Optional[str] = raw.get("last_used_at")
        self.revoked_at: Optional[str] = raw.get("revoked_at")

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None

    @property
    def test(self) -> bool:
        """``True`` for a sandbox key (``mode == "test"``, ``dsk_test_…``)."""
        return self.mode == "test"


class WebhookEndpoint(Response):
    """A registered webhook: ``id`` (``wh_…``), ``url``, ``events``, ``created_at``
    (never its secret)."""

    def __init__(self, raw: Dict[str, Any], **kw: Any) -> None:
        super().__init__(raw, **kw)
        self.id: str = raw.get("id", "")
        self.url: str = raw.get("url", "")
        self.events: List[str] = [e for e in raw.get("events") or [] if isinstance(e, str)]
        self.created_at: str = raw.get("created_at", "")


class CreatedWebhook(Response):
    """``create_webhook``: the ``webhook`` and its signing ``secret``
    (``whsec_…``), shown only this once: store it to verify deliveries."""

    def __init__(self, raw: Dict[str, Any], **kw: Any) -> None:
        super().__init__(raw, **kw)
        self.webhook = WebhookEndpoint(as_dict(raw.get("webhook")))
        self.secret: str = raw.get("secret", "")


class WebhookDelivery(Response):
    """One delivery attempt, as listed by ``webhook_deliveries``: ``event_id``,
    ``type``, ``attempt`` (1 for the first try), ``outcome`` (``delivered``,
    ``retrying`` or ``failed``), ``status_code`` and ``error`` (``None`` when
    not applicable), ``duration_ms``, ``attempted_at``."""

    def __init__(self, raw: Dict[str, Any], **kw: Any) -> None:
        super().__init__(raw, **kw)
        self.event_id: str = raw.get("event_id", "")
        self.type: str = raw.get("type", "")
        self.attempt: Optional[int] = opt_int(raw.get("attempt"))
        self.outcome: str = raw.get("outcome", "")
        self.status_code: Optional[int] = opt_int(raw.get("status_code"))
        self.error: Optional[str] = opt_str(raw.get("error"))
        self.duration_ms: Optional[int] = opt_int(raw.get("duration_ms"))
        self.attempted_at: str = raw.get("attempted_at", "")


class WebhookEvent(Response):
    """A verified webhook delivery (see :meth:`dossier.Webhook.verify`): ``id``
    (``evt_…``; the same on every redelivery, dedupe on it), ``type``
    (``search.completed``, ``search.failed`` or ``batch.completed``),
    ``created_at`` and ``data`` (the search envelope or the batch, a dict)."""

    def __init__(self, raw: Dict[str, Any], **kw: Any) -> None:
        super().__init__(raw, **kw)
        self.id: str = raw.get("id", "")
        self.type: str = raw.get("type", "")
        self.created_at: str = raw.get("created_at", "")
        self.data: Dict[str, Any] = as_dict(raw.get("data"))
