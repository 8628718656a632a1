<?php

declare(strict_types=1);

namespace Dossier\Exception;

/**
 * Dossier\Webhook::verify() refused a delivery: the Dossier-Signature header is missing or malformed,
 * no v1 signature matches the body under the secret, the timestamp is outside the tolerance, or the
 * signed body is not a JSON object. Answer such a request with a 4xx and do not act on it.
 */
class SignatureVerificationException extends \UnexpectedValueException implements DossierException
{
}
