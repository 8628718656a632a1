"""Response objects. Each keeps the decoded JSON body in ``raw`` and supports
``obj["field"]`` as a shortcut for ``obj.raw["field"]``."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from ._errors import parse_retry_after
from ._json import as_dict, dict_list, opt_int

__all__ = ["Response", "SearchResult", "Account", "Registration", "IssuedKey", "ApiKey"]


class Response:
    """Base of the objects returned by the client.

    Attributes:
        raw: the decoded JSON body.
        headers: the response headers, with lower-case names (empty for items
            of a list, such as the keys from ``list_keys``).
        http_status: the HTTP status (``None`` for items of a list).
        request_id: ``X-Request-Id`` of the response, if any.
    """

    def __init__(
        self,
        raw: Dict[str, Any],
        *,
        headers: Optional[Mapping[str, str]] = None,
        http_status: Optional[int] = None,
    ) -> None:
        self.raw: Dict[str, Any] = raw
        self.headers: Dict[str, str] = dict(headers or {})
        self.http_status = http_status

    @property
    def request_id(self) -> Optional[str]:
        return self.headers.get("x-request-id")

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.raw == self.raw  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.raw!r})"


class SearchResult(Response):
    """The envelope of a lookup (or of ``get_search``).

    Attributes:
        status: ``"success"``, or ``"pending"`` when the lookup still runs
            (only returned with ``wait=False``).
        search_id: ``srch_…``; fetch it again with ``client.get_search``.
        results: the result items, plain dicts as in the API reference
            (always a list; empty while pending).
        credits_remaining: the balance after this call's charge.
        sources: one ``{"provider", "outcome", "took_ms"}`` per provider tried.
        credits_spent: ``X-Credits-Spent`` (``None`` if absent).
        idempotency_key: the ``Idempotency-Key`` the lookup was sent with
            (``None`` for ``get_search``).
        replayed: ``True`` when the server answered an earlier request with the
            same ``Idempotency-Key`` (nothing charged again).
    """

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
        self.search_id: str = str(raw.get("search_id", ""))
        self.results: List[Dict[str, Any]] = dict_list(raw.get("results"))
        self.sources: List[Dict[str, Any]] = dict_list(raw.get("sources"))
        self.credits_remaining: Optional[int] = opt_int(raw.get("credits_remaining"))
        self.idempotency_key = idempotency_key

    @property
    def pending(self) -> bool:
        """``True`` while the lookup still runs (HTTP 202)."""
        return self.status == "pending"

    @property
    def credits_spent(self) -> Optional[int]:
        value = self.headers.get("x-credits-spent")
        try:
            return int(value) if value is not None else None
        except ValueError:
            return None

    @property
    def replayed(self) -> bool:
        return self.headers.get("idempotent-replayed", "").lower() == "true"

    @property
    def retry_after(self) -> Optional[float]:
        """``Retry-After`` of a pending answer, in seconds."""
        return parse_retry_after(self.headers.get("retry-after"))

    def __repr__(self) -> str:
        return (
            f"SearchResult(status={self.status!r}, search_id={self.search_id!r}, "
            f"results={len(self.results)} item(s), credits_remaining={self.credits_remaining!r})"
        )


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
        self.created_at: str = raw.get("created_at", "")
        self.last_used_at: Optional[str] = raw.get("last_used_at")
        self.revoked_at: Optional[str] = raw.get("revoked_at")

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None
