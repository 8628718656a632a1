"""The Dossier API client."""

from __future__ import annotations

import math
import os
import re
import uuid
from datetime import date, datetime, timezone
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union, cast
from urllib.parse import quote, urlencode

from ._errors import PollTimeoutError
from ._json import as_dict, dict_list, opt_int, opt_str
from ._models import (
    Account,
    ApiKey,
    BatchResult,
    CreatedWebhook,
    IssuedKey,
    Registration,
    Response,
    ResponseList,
    SearchHistory,
    SearchResult,
    WebhookDelivery,
    WebhookEndpoint,
    _Settling,
)
from ._transport import (
    DEFAULT_BACKOFF_BASE,
    DEFAULT_BACKOFF_CAP,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    MAX_RETRY_AFTER,
    RawResponse,
    Transport,
)

__all__ = ["Client", "DEFAULT_POLL_INTERVAL", "DEFAULT_POLL_TIMEOUT"]

DEFAULT_POLL_TIMEOUT = 60.0
# What the gateway waits by default before answering 202 (Prefer: wait=N caps it).
_SERVER_WAIT_S = 10
# Seconds between polls when a pending answer carries no (readable) Retry-After.
DEFAULT_POLL_INTERVAL = 1.0
_ENV_KEY = "DOSSIER_API_KEY"
_CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f]")
# What the gateway accepts as an Idempotency-Key (API.md): 1–255 visible ASCII characters (no spaces).
_IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")

_S = TypeVar("_S", bound=_Settling)
_T = TypeVar("_T", bound=Response)


class Client:
    """A client for the Dossier v1 API.

    Args:
        api_key: a ``dsk_…`` key; when omitted (or blank), ``DOSSIER_API_KEY``
            from the environment. Surrounding whitespace is removed. Without
            either, or with a control character inside, ``ValueError`` is raised.
        base_url: the server; when omitted (or blank), ``DOSSIER_BASE_URL`` from
            the environment, else ``http://127.0.0.1:3000`` (a path prefix such
            as ``https://example.com/dossier`` is kept).
        timeout: seconds one HTTP attempt may take as a whole, from connecting
            to reading the complete answer (default 30; ``None`` waits forever).
        max_retries: retries after the first attempt on 429, 503, connection
            failures and (when the request is safe to repeat) 408, 502 and 504 (default 2).
        poll_timeout: default deadline in seconds for a lookup, counting the
            polling of a ``202`` (default 60). Overridable per call.
        poll_interval: seconds between polls of a ``202`` whose answer has no
            readable ``Retry-After`` (default 1; the gateway sends 1). A poll
            waits the ``Retry-After`` otherwise, at most 60 seconds, and never
            past the deadline.
        backoff_base, backoff_cap: exponential backoff with full jitter: retry
            ``n`` (from 0) waits a random time in ``[0, min(cap, base * 2**n)]``
            seconds (defaults 0.5 and 8); an answer with a ``Retry-After`` header
            waits that instead. A ``Retry-After`` over 60 seconds is not waited
            out: the ``RateLimitError`` (or ``UnavailableError``) is raised at once.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        *,
        base_url: Optional[str] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        poll_timeout: float = DEFAULT_POLL_TIMEOUT,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        backoff_base: float = DEFAULT_BACKOFF_BASE,
        backoff_cap: float = DEFAULT_BACKOFF_CAP,
    ) -> None:
        # Trimmed (a key read from a file keeps its line break); a blank key is no key. As in the other clients.
        key = (api_key or "").strip() or (os.environ.get(_ENV_KEY) or "").strip()
        if not key:
            raise ValueError(f"no API key: pass api_key='dsk_…' or set {_ENV_KEY}")
        if _CONTROL_CHARACTER.search(key):
            # Refused here, without echoing it: http.client would raise at the first request, key and all.
            raise ValueError("the API key contains a control character (a line break or a tab?); it cannot be sent")
        self.api_key: str = key
        self.poll_timeout = poll_timeout
        self.poll_interval = poll_interval
        self._transport = Transport(
            base_url,
            timeout=timeout,
            max_retries=max_retries,
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
        )

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    @property
    def timeout(self) -> Optional[float]:
        return self._transport.timeout

    @property
    def max_retries(self) -> int:
        return self._transport.max_retries

    def __repr__(self) -> str:
        return f"Client(api_key='{self.api_key[:8]}…', base_url={self.base_url!r})"

    # -- accounts (no key needed) --------------------------------------------

    @classmethod
    def register(
        cls,
        email: str,
        password: str,
        *,
        base_url: Optional[str] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        request_id: Optional[str] = None,
    ) -> Registration:
        """Create an account. Returns its first ``api_key`` (shown once), the
        ``account`` and the signup ``credits_remaining``."""
        transport = Transport(base_url, timeout=timeout, max_retries=max_retries)
        raw = transport.request(
            "POST",
            "/v1/auth/register",
            body={"email": email, "password": password},
            safe_to_resend=False,
            request_id=request_id,
        )
        return Registration(_shaped(raw, "register"), headers=raw.headers, http_status=raw.status)

    @classmethod
    def login(
        cls,
        email: str,
        password: str,
        *,
        base_url: Optional[str] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        request_id: Optional[str] = None,
    ) -> IssuedKey:
        """Log in: returns a new ``api_key`` (shown once) and its ``key_id``."""
        transport = Transport(base_url, timeout=timeout, max_retries=max_retries)
        raw = transport.request(
            "POST",
            "/v1/auth/login",
            body={"email": email, "password": password},
            safe_to_resend=False,
            request_id=request_id,
        )
        return IssuedKey(_shaped(raw, "key_issued"), headers=raw.headers, http_status=raw.status)

    # -- account and keys -----------------------------------------------------

    def account(self, *, request_id: Optional[str] = None) -> Account:
        """The account and its ``credits_remaining``."""
        raw = self._transport.request("GET", "/v1/account", api_key=self.api_key, request_id=request_id)
        return Account(_shaped(raw, "account"), headers=raw.headers, http_status=raw.status)

    def create_key(
        self, name: Optional[str] = None, *, mode: Optional[str] = None, request_id: Optional[str] = None
    ) -> IssuedKey:
        """Create another API key (``api_key`` is shown once). ``mode="test"``
        makes a sandbox key (``dsk_test_…``): its lookups are free and answer
        from the server's synthetic data set. The default is the calling key's
        mode: a test key makes only test keys."""
        body: Dict[str, Any] = {k: v for k, v in (("name", name), ("mode", mode)) if v is not None}
        raw = self._transport.request(
            "POST", "/v1/auth/keys", body=body, api_key=self.api_key, safe_to_resend=False, request_id=request_id
        )
        return IssuedKey(_shaped(raw, "key_issued"), headers=raw.headers, http_status=raw.status)

    def list_keys(self, *, request_id: Optional[str] = None) -> ResponseList[ApiKey]:
        """Every live key of the account and its 100 most recently revoked (``revoked_at`` set);
        a test key sees only the test keys."""
        raw = self._transport.request("GET", "/v1/auth/keys", api_key=self.api_key, request_id=request_id)
        return _listed(raw, ApiKey, "key_list", "keys")

    def revoke_key(self, key_id: str, *, request_id: Optional[str] = None) -> ApiKey:
        """Revoke a key (``key_…``); it is refused from the next request on.

        When the first answer was lost and the retry finds the key gone (404), the revoke was done: the
        key returned holds only its ``id`` (``http_status`` 404)."""
        raw = self._transport.request(
            "DELETE",
            f"/v1/auth/keys/{_segment('key_id', key_id)}",
            api_key=self.api_key,
            request_id=request_id,
            gone_on_retry={"status": "success", "key": {"id": key_id}},
        )
        return ApiKey(_shaped(raw, "key_revoked")["key"], headers=raw.headers, http_status=raw.status)

    # -- lookups --------------------------------------------------------------

    def search(
        self,
        query: Optional[str] = None,
        type: Optional[str] = None,
        country: Optional[str] = None,
        *,
        name: Optional[str] = None,
        email: Optional[str] = None,
        phone: Optional[str] = None,
        username: Optional[str] = None,
        location: Optional[str] = None,
        age_range: Optional[str] = None,
        sites: Optional[Sequence[str]] = None,
        tags: Optional[Sequence[str]] = None,
        top: Optional[int] = None,
        permissible_purpose: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        wait: bool = True,
        poll_timeout: Optional[float] = None,
        request_id: Optional[str] = None,
    ) -> SearchResult:
        """Search, in one of two forms:

        * generic: ``search(query="Acme", type="company", country="US")`` →
          ``POST /v1/search`` (``type`` is person, company, email, phone or username);
        * person fields: ``search(name="Gonzalo Halvorson", location="South Jillville, NM")`` →
          ``POST /v1/search/person`` (same as :meth:`search_person`).

        Mixing the two forms, or giving neither, raises ``ValueError``.

        ``sites``, ``tags`` and ``top`` choose the sites a username is checked on,
        in either form (``type="username"``, or a ``username``): see :meth:`search_person`.
        """
        person = {
            "name": name,
            "email": email,
            "phone": phone,
            "username": username,
            "location": location,
            "age_range": age_range,
        }
        generic = {"query": query, "type": type, "country": country}
        has_person = any(v is not None for v in person.values())
        has_generic = any(v is not None for v in generic.values())
        if has_person and has_generic:
            raise ValueError(
                "search() takes either query/type/country or person fields "
                "(name, email, phone, username, location, age_range), not both"
            )
        if not has_person and not has_generic:
            raise ValueError(
                "search() needs query and type, or at least one of name, email, phone, username"
            )
        path, fields = ("/v1/search/person", person) if has_person else ("/v1/search", generic)
        return self._lookup(
            path,
            {**fields, **_site_selection(sites, tags, top)},
            permissible_purpose=permissible_purpose,
            idempotency_key=idempotency_key,
            wait=wait,
            poll_timeout=poll_timeout,
            request_id=request_id,
        )

    def search_person(
        self,
        name: Optional[str] = None,
        *,
        email: Optional[str] = None,
        phone: Optional[str] = None,
        username: Optional[str] = None,
        location: Optional[str] = None,
        age_range: Optional[str] = None,
        sites: Optional[Sequence[str]] = None,
        tags: Optional[Sequence[str]] = None,
        top: Optional[int] = None,
        country: Optional[str] = None,
        limit: Optional[int] = None,
        min_score: Optional[float] = None,
        permissible_purpose: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        wait: bool = True,
        poll_timeout: Optional[float] = None,
        request_id: Optional[str] = None,
    ) -> SearchResult:
        """``POST /v1/search/person``: at least one of name, email, phone, username
        (the server answers ``ValidationError`` on ``name`` otherwise).
        ``age_range`` looks like ``"30-40"``, ``"65+"`` or ``"-25"``.

        With a ``username``, ``sites`` (site names), ``tags`` (categories such as
        ``"coding"``, country codes such as ``"de"``) and ``top`` (the N most
        popular) choose the sites it is checked on; without them, every site of
        the server's list. A name or tag no site has is a ``ValidationError``
        (``GET /v1/username/sites`` lists them). The envelope's
        ``raw["source_summary"]`` counts ``sources`` by outcome; a pending
        search's ``raw["progress"]`` shows the accounts found so far.

        ``country`` (ISO 3166-1 alpha-2, e.g. ``"US"``) keeps people known in
        that country or of no known country, and is the region a national
        ``phone`` is read in. ``limit`` (a whole number from 1 to 100; the
        server's default is 25) is how many items to answer at most, best first;
        ``min_score`` (0 to 1) drops items whose ``match_score`` is below it.
        :attr:`SearchResult.total_results` says how many items passed
        ``min_score`` before ``limit`` cut them. All three are sent as given (a
        value out of range is the server's ``ValidationError`` naming it)."""
        return self._lookup(
            "/v1/search/person",
            {
                "name": name,
                "email": email,
                "phone": phone,
                "username": username,
                "location": location,
                "age_range": age_range,
                **_site_selection(sites, tags, top),
                "country": country,
                "limit": limit,
                "min_score": min_score,
            },
            permissible_purpose=permissible_purpose,
            idempotency_key=idempotency_key,
            wait=wait,
            poll_timeout=poll_timeout,
            request_id=request_id,
        )

    def search_company(
        self,
        company_name: Optional[str] = None,
        *,
        domain: Optional[str] = None,
        registration_number: Optional[str] = None,
        country: Optional[str] = None,
        permissible_purpose: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        wait: bool = True,
        poll_timeout: Optional[float] = None,
        request_id: Optional[str] = None,
    ) -> SearchResult:
        """``POST /v1/search/company``: at least one of company_name, domain,
        registration_number."""
        return self._lookup(
            "/v1/search/company",
            {
                "company_name": company_name,
                "domain": domain,
                "registration_number": registration_number,
                "country": country,
            },
            permissible_purpose=permissible_purpose,
            idempotency_key=idempotency_key,
            wait=wait,
            poll_timeout=poll_timeout,
            request_id=request_id,
        )

    def screen(
        self,
        name: str,
        *,
        type: Optional[str] = None,
        birth_year: Optional[int] = None,
        country: Optional[str] = None,
        permissible_purpose: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        wait: bool = True,
        poll_timeout: Optional[float] = None,
        request_id: Optional[str] = None,
    ) -> SearchResult:
        """``POST /v1/screen``: ``name`` screened against the sanctions lists the
        operator imported, alone. ``type`` is ``"person"`` (the server's default)
        or ``"company"``; ``birth_year`` (a person's) rules out entries born more
        than a year apart; ``country`` (ISO alpha-2) is reported in ``matched_on``
        and narrows nothing. Each result is a listed entity the name matches, with
        its ``watchlist_hits``; charged as a person or company lookup, only with
        a hit."""
        return self._lookup(
            "/v1/screen",
            {"name": name, "type": type, "birth_year": birth_year, "country": country},
            permissible_purpose=permissible_purpose,
            idempotency_key=idempotency_key,
            wait=wait,
            poll_timeout=poll_timeout,
            request_id=request_id,
        )

    def verify_email(
        self,
        email: str,
        *,
        permissible_purpose: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        wait: bool = True,
        poll_timeout: Optional[float] = None,
        request_id: Optional[str] = None,
    ) -> SearchResult:
        """``POST /v1/verify/email``."""
        return self._lookup(
            "/v1/verify/email",
            {"email": email},
            permissible_purpose=permissible_purpose,
            idempotency_key=idempotency_key,
            wait=wait,
            poll_timeout=poll_timeout,
            request_id=request_id,
        )

    def verify_phone(
        self,
        phone: str,
        country: Optional[str] = None,
        *,
        permissible_purpose: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        wait: bool = True,
        poll_timeout: Optional[float] = None,
        request_id: Optional[str] = None,
    ) -> SearchResult:
        """``POST /v1/verify/phone``: E.164 (``"+14155552671"``), or a national
        number with ``country`` as its region. Unparseable input is a
        ``ValidationError``; a parseable but invalid number is a result with
        ``valid: False``."""
        return self._lookup(
            "/v1/verify/phone",
            {"phone": phone, "country": country},
            permissible_purpose=permissible_purpose,
            idempotency_key=idempotency_key,
            wait=wait,
            poll_timeout=poll_timeout,
            request_id=request_id,
        )

    def get_search(
        self,
        search_id: str,
        *,
        wait: bool = False,
        poll_timeout: Optional[float] = None,
        request_id: Optional[str] = None,
    ) -> SearchResult:
        """``GET /v1/searches/{id}``: the search as it is now (``status`` is
        ``"pending"`` while it runs). With ``wait=True``, poll until it is done
        or ``poll_timeout`` passes (then :class:`~dossier.PollTimeoutError`).
        A failed lookup raises :class:`~dossier.UnavailableError`."""
        deadline = self._transport.now() + self._poll_timeout(poll_timeout)
        result = self._fetch_search(search_id, idempotency_key=None, request_id=request_id)
        if wait and result.pending:
            result = self._poll(
                result,
                deadline,
                lambda p: self._fetch_search(p.search_id, idempotency_key=None, request_id=request_id),
            )
        return result

    # -- search history -------------------------------------------------------

    def list_searches(
        self,
        *,
        kind: Optional[str] = None,
        since: Union[str, datetime, date, None] = None,
        until: Union[str, datetime, date, None] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        request_id: Optional[str] = None,
    ) -> SearchHistory:
        """``GET /v1/searches``: one page of the account's own searches, newest
        first, without inputs or results (free). ``kind`` is person, company,
        email or phone; ``since`` (inclusive) and ``until`` (exclusive) are a
        ``datetime`` or ``date`` (sent as RFC 3339 in UTC, a naive ``datetime``
        read as local time, a ``date`` as midnight UTC) or an RFC 3339 string
        (sent as given); ``limit`` is 1–100 (server default 20); ``cursor`` is the
        previous page's ``next_cursor``, sent with the same filters.
        :meth:`iter_searches` follows the cursors for you."""
        params = (
            ("kind", kind),
            ("since", _instant(since)),
            ("until", _instant(until)),
            ("limit", limit),
            ("cursor", cursor),
        )
        query = urlencode([(k, v) for k, v in params if v is not None])
        raw = self._transport.request(
            "GET", "/v1/searches" + (f"?{query}" if query else ""), api_key=self.api_key, request_id=request_id
        )
        return SearchHistory(_shaped(raw, "history"), headers=raw.headers, http_status=raw.status)

    def iter_searches(
        self,
        *,
        kind: Optional[str] = None,
        since: Union[str, datetime, date, None] = None,
        until: Union[str, datetime, date, None] = None,
        limit: Optional[int] = None,
        request_id: Optional[str] = None,
    ) -> Iterator[Dict[str, Any]]:
        """Every search :meth:`list_searches` lists with these filters, newest
        first, fetching page after page (``limit`` per request) until
        ``next_cursor`` is ``None``."""
        cursor: Optional[str] = None
        while True:
            page = self.list_searches(
                kind=kind, since=since, until=until, limit=limit, cursor=cursor, request_id=request_id
            )
            yield from page.searches
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    # -- batch ----------------------------------------------------------------

    def batch(
        self,
        requests: Sequence[Mapping[str, Any]],
        *,
        idempotency_key: Optional[str] = None,
        wait: bool = True,
        poll_timeout: Optional[float] = None,
        request_id: Optional[str] = None,
    ) -> BatchResult:
        """``POST /v1/batch``: up to 100 lookups in one call, each
        ``{"kind": "person"|"company"|"email"|"phone", "input": {…}}`` with
        ``input`` the body of that lookup's endpoint.

        Each item is judged on its own: ``result.items[i]`` is the answer to
        ``requests[i]``, a success, a pending lookup or an error (see
        :class:`~dossier.BatchItem`). A batch that is not a list of 1–100
        requests raises :class:`~dossier.ValidationError`. ``wait``,
        ``poll_timeout`` and ``idempotency_key`` (for the whole batch) work as
        for single lookups; a pending batch is polled at ``GET /v1/batches/{id}``.
        """
        return self._submit(
            "/v1/batch",
            {"requests": [_batch_request(r) for r in requests]},
            idempotency_key=idempotency_key,
            wait=wait,
            poll_timeout=poll_timeout,
            request_id=request_id,
            parse=_batch_result,
            refetch=lambda pending: self._fetch_batch(pending.batch_id, pending.idempotency_key, request_id),
        )

    def get_batch(
        self,
        batch_id: str,
        *,
        wait: bool = False,
        poll_timeout: Optional[float] = None,
        request_id: Optional[str] = None,
    ) -> BatchResult:
        """``GET /v1/batches/{id}``: the batch as it is now (``status`` is
        ``"pending"`` while an item runs). With ``wait=True``, poll until every
        item is settled or ``poll_timeout`` passes (then
        :class:`~dossier.PollTimeoutError` with ``batch_id``)."""
        deadline = self._transport.now() + self._poll_timeout(poll_timeout)
        result = self._fetch_batch(batch_id, None, request_id)
        if wait and result.pending:
            result = self._poll(result, deadline, lambda p: self._fetch_batch(p.batch_id, None, request_id))
        return result

    # -- webhooks -------------------------------------------------------------

    def create_webhook(
        self, url: str, events: Optional[Sequence[str]] = None, *, request_id: Optional[str] = None
    ) -> CreatedWebhook:
        """``POST /v1/webhooks``: register ``url`` (https) for ``events``
        (``search.completed``, ``search.failed``, ``batch.completed``; default
        all). The result's ``secret`` signs every delivery and is shown only
        now: keep it for :meth:`dossier.Webhook.verify`."""
        body: Dict[str, Any] = {"url": url}
        if events is not None:
            body["events"] = list(events)
        raw = self._transport.request(
            "POST", "/v1/webhooks", body=body, api_key=self.api_key, safe_to_resend=False, request_id=request_id
        )
        return CreatedWebhook(_shaped(raw, "webhook_created"), headers=raw.headers, http_status=raw.status)

    def list_webhooks(self, *, request_id: Optional[str] = None) -> ResponseList[WebhookEndpoint]:
        """``GET /v1/webhooks``: the account's webhooks, oldest first (no secrets)."""
        raw = self._transport.request("GET", "/v1/webhooks", api_key=self.api_key, request_id=request_id)
        return _listed(raw, WebhookEndpoint, "webhook_list", "webhooks")

    def delete_webhook(self, webhook_id: str, *, request_id: Optional[str] = None) -> WebhookEndpoint:
        """``DELETE /v1/webhooks/{id}``: nothing is sent to it from then on.

        When the first answer was lost and the retry finds the webhook gone (404), the delete was done:
        the webhook returned holds only its ``id`` (``http_status`` 404)."""
        raw = self._transport.request(
            "DELETE",
            f"/v1/webhooks/{_segment('webhook_id', webhook_id)}",
            api_key=self.api_key,
            request_id=request_id,
            gone_on_retry={"status": "success", "webhook": {"id": webhook_id}},
        )
        return WebhookEndpoint(_shaped(raw, "webhook_deleted")["webhook"], headers=raw.headers, http_status=raw.status)

    def webhook_deliveries(
        self, webhook_id: str, *, request_id: Optional[str] = None
    ) -> ResponseList[WebhookDelivery]:
        """``GET /v1/webhooks/{id}/deliveries``: its delivery attempts, newest
        first (the latest 100)."""
        raw = self._transport.request(
            "GET",
            f"/v1/webhooks/{_segment('webhook_id', webhook_id)}/deliveries",
            api_key=self.api_key,
            request_id=request_id,
        )
        return _listed(raw, WebhookDelivery, "deliveries", "deliveries")

    # -- internals ------------------------------------------------------------

    def _poll_timeout(self, override: Optional[float]) -> float:
        return self.poll_timeout if override is None else override

    def _lookup(
        self,
        path: str,
        fields: Mapping[str, Any],
        *,
        permissible_purpose: Optional[str],
        idempotency_key: Optional[str],
        wait: bool,
        poll_timeout: Optional[float],
        request_id: Optional[str],
    ) -> SearchResult:
        body: Dict[str, Any] = {k: v for k, v in fields.items() if v is not None}
        if permissible_purpose is not None:
            body["permissible_purpose"] = permissible_purpose
        return self._submit(
            path,
            body,
            idempotency_key=idempotency_key,
            wait=wait,
            poll_timeout=poll_timeout,
            request_id=request_id,
            parse=_search_result,
            refetch=lambda pending: self._fetch_search(
                pending.search_id, idempotency_key=pending.idempotency_key, request_id=request_id
            ),
        )

    def _submit(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        idempotency_key: Optional[str],
        wait: bool,
        poll_timeout: Optional[float],
        request_id: Optional[str],
        parse: Callable[[RawResponse, str], _S],
        refetch: Callable[[_S], _S],
    ) -> _S:
        """POST work with an ``Idempotency-Key`` and ``Prefer``, then poll a
        pending answer with ``refetch`` until it settles (when ``wait``)."""
        if idempotency_key is not None:
            _check_idempotency_key(idempotency_key)
        budget = self._poll_timeout(poll_timeout)
        deadline = self._transport.now() + budget
        key = idempotency_key if idempotency_key is not None else str(uuid.uuid4())
        headers = {
            "Idempotency-Key": key,
            "Prefer": f"wait={self._server_wait(budget)}" if wait else "respond-async",
        }
        raw = self._transport.request(
            "POST", path, body=body, api_key=self.api_key, headers=headers, request_id=request_id
        )
        result = parse(raw, key)
        if wait and result.pending:
            result = self._poll(result, deadline, refetch)
        return result

    def _server_wait(self, budget: float) -> int:
        """How long the gateway may hold the request before answering 202: its
        default of 10 s, less when the deadline or the HTTP timeout is shorter."""
        seconds = min(_SERVER_WAIT_S, max(0, math.floor(budget)))
        if self.timeout is not None:
            seconds = min(seconds, max(0, math.floor(self.timeout) - 2))
        return seconds

    def _fetch_search(
        self, search_id: str, *, idempotency_key: Optional[str], request_id: Optional[str]
    ) -> SearchResult:
        raw = self._transport.request(
            "GET",
            f"/v1/searches/{_segment('search_id', search_id)}",
            api_key=self.api_key,
            retry_failed_search=False,
            request_id=request_id,
        )
        return _search_result(raw, idempotency_key)

    def _fetch_batch(
        self, batch_id: str, idempotency_key: Optional[str], request_id: Optional[str]
    ) -> BatchResult:
        raw = self._transport.request(
            "GET", f"/v1/batches/{_segment('batch_id', batch_id)}", api_key=self.api_key, request_id=request_id
        )
        return _batch_result(raw, idempotency_key)

    def _poll(self, result: _S, deadline: float, refetch: Callable[[_S], _S]) -> _S:
        while result.pending:
            remaining = deadline - self._transport.now()
            if remaining <= 0:
                what = (
                    f"batch {result.batch_id}"
                    if isinstance(result, BatchResult)
                    else f"search {result.get('search_id')}"
                )
                getter = "get_batch()" if isinstance(result, BatchResult) else "get_search()"
                raise PollTimeoutError(
                    f"{what} is still pending after the polling deadline; fetch it later with {getter}",
                    search=result,
                )
            # The answer's Retry-After (1 s from the gateway), else poll_interval; at most 60 s, as a retry
            # waits at most, and never past the deadline. As in the other three clients.
            interval = result.retry_after
            if interval is None:
                interval = self.poll_interval
            self._transport.sleep(min(interval, MAX_RETRY_AFTER, remaining))
            result = refetch(result)
        return result


def _site_selection(
    sites: Optional[Sequence[str]], tags: Optional[Sequence[str]], top: Optional[int]
) -> Dict[str, Any]:
    """Username presence's choice of sites as the body carries it: ``sites`` and
    ``tags`` as JSON arrays (a tuple is sent as one), ``top`` as given; absent
    ones left out."""
    chosen: Dict[str, Any] = {}
    if sites is not None:
        chosen["sites"] = list(sites) if isinstance(sites, (list, tuple)) else sites
    if tags is not None:
        chosen["tags"] = list(tags) if isinstance(tags, (list, tuple)) else tags
    if top is not None:
        chosen["top"] = top
    return chosen


def _segment(name: str, value: object) -> str:
    """An id as a path segment. An empty one (a bug in the caller) is refused before anything is
    sent, as in the other clients, rather than answered 404 "no such route" after a round trip."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string, got {value!r:.80}")
    return quote(value, safe="")


def _instant(value: Union[str, datetime, date, None]) -> Optional[str]:
    """A history filter as sent: a ``datetime`` as RFC 3339 in UTC (a naive one is local time, as
    ``datetime.astimezone`` reads it), its fraction of a second only when it has one (trailing zeros
    dropped); a ``date`` as midnight UTC of that day; a string as given. As in the other clients."""
    if isinstance(value, datetime):  # before date: a datetime is a date
        utc = value.astimezone(timezone.utc)
        text = utc.replace(microsecond=0, tzinfo=None).isoformat()
        if utc.microsecond:
            text += f".{utc.microsecond:06d}".rstrip("0")
        return text + "Z"
    if isinstance(value, date):
        return f"{value.isoformat()}T00:00:00Z"
    return value


def _check_idempotency_key(key: object) -> None:
    """Refuses, before anything is sent, a key the gateway would refuse (or one
    that could add a header: a CR or LF)."""
    if not isinstance(key, str) or not _IDEMPOTENCY_KEY.fullmatch(key):
        raise ValueError(
            "idempotency_key must be 1–255 printable ASCII characters "
            f"(no spaces or control characters), got {key!r:.80}"
        )


def _batch_request(request: Mapping[str, Any]) -> Dict[str, Any]:
    """One batch request as sent: its ``input`` without ``None`` fields, like a
    lookup's body (the server rejects ``null`` fields)."""
    out = dict(request)
    item_input = out.get("input")
    if isinstance(item_input, Mapping):
        out["input"] = {k: v for k, v in item_input.items() if v is not None}
    return out


def _listed(raw: RawResponse, item: Callable[[Dict[str, Any]], _T], kind: str, field: str) -> ResponseList[_T]:
    """The items of a listing answer (``keys``, ``webhooks``, ``deliveries``), as a list that also carries the
    HTTP answer."""
    items = [item(entry) for entry in dict_list(_shaped(raw, kind)[field])]
    return ResponseList(items, raw.body, headers=raw.headers, http_status=raw.status)


def _named(value: Any) -> bool:
    return isinstance(value, dict) and bool(opt_str(as_dict(value).get("id")))


def _objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(entry, dict) for entry in cast(List[Any], value))


def _whole(value: Any) -> bool:
    return opt_int(value) is not None


# The documented shape (API.md) of every other 2xx answer, beside ``status`` ``"success"``: what it is called and
# what its body must hold to be read as that answer. The same rules in the JavaScript, Ruby and PHP clients.
_ANSWERS: Dict[str, Tuple[str, Callable[[Dict[str, Any]], bool]]] = {
    "account": (
        "account answer (status, account with its id, credits_remaining)",
        lambda b: _named(b.get("account")) and _whole(b.get("credits_remaining")),
    ),
    "register": (
        "registration answer (status, account with its id, api_key, credits_remaining)",
        lambda b: _named(b.get("account")) and bool(opt_str(b.get("api_key"))) and _whole(b.get("credits_remaining")),
    ),
    "key_issued": (
        "new key answer (status, api_key, key_id)",
        lambda b: bool(opt_str(b.get("api_key"))) and bool(opt_str(b.get("key_id"))),
    ),
    "key_list": ("key list (status, keys)", lambda b: _objects(b.get("keys"))),
    "key_revoked": ("revoked key answer (status, key with its id)", lambda b: _named(b.get("key"))),
    "history": (
        "search history page (status, searches, next_cursor)",
        lambda b: _objects(b.get("searches")) and (b.get("next_cursor", 0) is None or bool(opt_str(b.get("next_cursor")))),
    ),
    "webhook_created": (
        "new webhook answer (status, webhook with its id, secret)",
        lambda b: _named(b.get("webhook")) and bool(opt_str(b.get("secret"))),
    ),
    "webhook_list": ("webhook list (status, webhooks)", lambda b: _objects(b.get("webhooks"))),
    "webhook_deleted": ("deleted webhook answer (status, webhook with its id)", lambda b: _named(b.get("webhook"))),
    "deliveries": ("delivery list (status, deliveries)", lambda b: _objects(b.get("deliveries"))),
}


def _shaped(raw: RawResponse, kind: str) -> Dict[str, Any]:
    """The body of a 2xx answer of ``kind``; one that is not its documented shape is an :class:`APIError` with
    ``code`` ``None``, as a lookup's that is not the envelope: a broken answer is never read as an account without
    an id or an empty list."""
    what, holds = _ANSWERS[kind]
    if raw.body.get("status") != "success" or not holds(raw.body):
        raise raw.not_a(what)
    return raw.body


def _search_result(raw: RawResponse, idempotency_key: Optional[str]) -> SearchResult:
    """A lookup's or ``get_search``'s answer. One that is not the envelope (``status`` ``"success"`` with its
    ``results`` list, or ``"pending"``; a ``search_id``; ``credits_remaining``) is an :class:`APIError`, as in
    the other three clients: a broken answer is never shown as a search that found nothing."""
    body = raw.body
    settled = body.get("status") == "success" and isinstance(body.get("results"), list)
    if not (settled or body.get("status") == "pending") or not _settling_fields(body, "search_id"):
        raise raw.not_a("search envelope (status, search_id, credits_remaining and, once done, results)")
    return SearchResult(body, headers=raw.headers, http_status=raw.status, idempotency_key=idempotency_key)


def _batch_result(raw: RawResponse, idempotency_key: Optional[str]) -> BatchResult:
    """A batch's answer; one that is not the envelope (``status`` ``"success"`` or ``"pending"``, ``batch_id``,
    ``items``, ``credits_remaining``) is an :class:`APIError`, as for a search."""
    body = raw.body
    settles = body.get("status") in ("success", "pending") and isinstance(body.get("items"), list)
    if not settles or not _settling_fields(body, "batch_id"):
        raise raw.not_a("batch envelope (status, batch_id, items, credits_remaining)")
    return BatchResult(body, headers=raw.headers, http_status=raw.status, idempotency_key=idempotency_key)


def _settling_fields(body: Dict[str, Any], id_field: str) -> bool:
    """Whether a search's or a batch's answer names it (a non-empty ``id_field``) and the balance."""
    return bool(opt_str(body.get(id_field))) and opt_int(body.get("credits_remaining")) is not None
