"""Dossier API client (standard library only).

    import dossier

    client = dossier.Client(api_key="dsk_…")
    result = client.search(name="Gonzalo Halvorson")
    print(result.results, result.credits_remaining)
"""

from ._client import DEFAULT_POLL_INTERVAL, DEFAULT_POLL_TIMEOUT, Client
from ._errors import (
    APIConnectionError,
    APIError,
    AuthenticationError,
    ConflictError,
    InsufficientCreditsError,
    NotFoundError,
    PollTimeoutError,
    RateLimitError,
    SearchTimeoutError,
    SignatureVerificationError,
    UnavailableError,
    ValidationError,
)
from ._models import (
    Account,
    ApiKey,
    BatchItem,
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
    WebhookEvent,
)
from ._transport import DEFAULT_BASE_URL, USER_AGENT
from ._version import __version__
from ._webhook import Webhook

__all__ = [
    "Client",
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
    "Webhook",
    "Response",
    "ResponseList",
    "SearchResult",
    "SearchHistory",
    "BatchResult",
    "BatchItem",
    "CreatedWebhook",
    "WebhookEndpoint",
    "WebhookDelivery",
    "WebhookEvent",
    "Account",
    "Registration",
    "IssuedKey",
    "ApiKey",
    "DEFAULT_BASE_URL",
    "DEFAULT_POLL_INTERVAL",
    "DEFAULT_POLL_TIMEOUT",
    "USER_AGENT",
    "__version__",
]
