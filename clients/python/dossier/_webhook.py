"""Verifying webhook deliveries (``Dossier-Signature``)."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any, List, Optional, Union

from ._errors import SignatureVerificationError
from ._json import as_dict
from ._models import WebhookEvent

__all__ = ["Webhook", "SIGNATURE_HEADER", "DEFAULT_TOLERANCE"]

SIGNATURE_HEADER = "Dossier-Signature"
DEFAULT_TOLERANCE = 300


class Webhook:
    """Checks that a delivery came from your Dossier server.

    Each delivery is a ``POST`` whose header ``Dossier-Signature`` reads
    ``t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">``, keyed with
    the webhook's secret (``whsec_…``, used as-is); the hex may be in either
    case::

        event = dossier.Webhook.verify(request.body, request.headers["Dossier-Signature"], secret)
        if event.type == "search.completed": ...
    """

    @staticmethod
    def verify(
        payload: Union[bytes, str],
        header: Optional[str],
        secret: str,
        tolerance: float = DEFAULT_TOLERANCE,
        *,
        now: Optional[float] = None,
    ) -> WebhookEvent:
        """Verify a delivery and return its parsed event.

        Args:
            payload: the raw request body, exactly as received (bytes, or text
                that is encoded as UTF-8); not a re-serialized JSON object.
            header: the ``Dossier-Signature`` header (``None`` when absent).
            secret: the webhook's ``whsec_…`` secret from ``create_webhook``.
            tolerance: the largest accepted difference, in seconds, between
                ``t`` and now (default 300), against replays.
            now: the current Unix time, for tests (default ``time.time()``).

        Raises:
            SignatureVerificationError: the secret is empty (or ``None``), the
                header is missing or malformed, no ``v1`` signature matches,
                ``t`` is out of tolerance, or the payload is not a JSON object.
        """
        if not secret:
            # As in the other clients: an unset secret (an empty environment variable) would otherwise accept
            # a signature anyone can compute with the empty key.
            raise SignatureVerificationError("no webhook secret given")
        if not header:
            raise SignatureVerificationError(f"no {SIGNATURE_HEADER} header")
        timestamp, signatures = _parse_header(header)
        body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
        expected = hmac.new(
            secret.encode("utf-8"), f"{timestamp}.".encode("ascii") + body, hashlib.sha256
        ).hexdigest().encode("ascii")
        # Compare against every v1 (a rotating sender may send several), each in constant time. Hex is
        # case-insensitive (RFC 4648 section 8), as in the other three clients: the candidate is lower-cased.
        matched = False
        for candidate in signatures:
            matched = hmac.compare_digest(expected, candidate.lower().encode("utf-8")) or matched
        if not matched:
            raise SignatureVerificationError("no v1 signature matches the payload")
        current = time.time() if now is None else now
        if abs(current - timestamp) > tolerance:
            raise SignatureVerificationError(
                f"the signature's timestamp is {abs(current - timestamp):.0f} s away from now "
                f"(tolerance {tolerance} s)"
            )
        try:
            event: Any = json.loads(body)
        except ValueError as exc:
            raise SignatureVerificationError("the payload is not JSON") from exc
        if not isinstance(event, dict):
            raise SignatureVerificationError("the payload is not a JSON object")
        return WebhookEvent(as_dict(event))


def _parse_header(header: str) -> "tuple[int, List[str]]":
    timestamp: Optional[int] = None
    signatures: List[str] = []
    for part in header.split(","):
        # An element without "=" (a trailing comma, say) is ignored like any element not t or v1, as the other
        # clients do: the header still needs its t and a matching v1.
        key, _, value = part.strip().partition("=")
        if key == "t":
            # At most 12 digits (as the Ruby and PHP clients): a longer t is no Unix time, and
            # int() refuses more than 4300 digits with a ValueError.
            if not value.isdigit() or not value.isascii() or len(value) > 12:
                raise SignatureVerificationError(f"malformed {SIGNATURE_HEADER} header: t is not a Unix time")
            timestamp = int(value)
        elif key == "v1" and value:
            signatures.append(value)
    if timestamp is None or not signatures:
        raise SignatureVerificationError(f"malformed {SIGNATURE_HEADER} header: it needs t= and v1=")
    return timestamp, signatures
