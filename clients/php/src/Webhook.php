<?php

declare(strict_types=1);

namespace Dossier;

use Dossier\Exception\SignatureVerificationException;
use Dossier\Internal\Json;

/**
 * Checks the Dossier-Signature header of a webhook delivery.
 *
 *     $event = Dossier\Webhook::verify(
 *         file_get_contents('php://input'),          // the body exactly as received
 *         $_SERVER['HTTP_DOSSIER_SIGNATURE'] ?? null,
 *         (string) getenv('DOSSIER_WEBHOOK_SECRET'),
 *     );
 *     $event['type'];  // "search.completed"
 *
 * The header is `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the secret>` (the
 * whsec_… string as is), the hex in either case. Several v1= values are accepted: any one matching is enough.
 */
final class Webhook
{
    public const SIGNATURE_HEADER = 'Dossier-Signature';
    /** Seconds the signature's timestamp may be away from now, either way. */
    public const DEFAULT_TOLERANCE = 300;

    /**
     * @param string $payload the raw request body
     * @param string|null $header the Dossier-Signature header's value
     * @param string $secret the webhook's whsec_… secret
     * @param int|null $tolerance seconds |now − t| may reach; null disables the check
     * @param int|null $now the current Unix time (for tests); null: time()
     * @return array<string, mixed> the event: id, type, created_at, data
     * @throws SignatureVerificationException
     */
    public static function verify(string $payload, ?string $header, #[\SensitiveParameter] string $secret, ?int $tolerance = self::DEFAULT_TOLERANCE, ?int $now = null): array
    {
        if ($secret === '') {
            throw new SignatureVerificationException('no webhook secret given');
        }
        [$timestamp, $signatures] = self::parseHeader($header);
        $expected = self::sign($secret, $payload, $timestamp);
        $matched = false;
        foreach ($signatures as $given) {
            // every candidate is compared (no early exit), each in constant time
            $matched = hash_equals($expected, $given) || $matched;
        }
        if (!$matched) {
            throw new SignatureVerificationException('no v1 signature matches the payload and secret');
        }
        if ($tolerance !== null && abs(($now ?? time()) - $timestamp) > $tolerance) {
            throw new SignatureVerificationException(sprintf('signature timestamp %d is outside the %d s tolerance', $timestamp, $tolerance));
        }
        // Any JSON object, {} included, as in the other three clients.
        return Json::object($payload) ?? throw new SignatureVerificationException('the payload is not a JSON object');
    }

    /** The hex HMAC-SHA256 of "<timestamp>.<payload>" keyed with the secret (what the server sends as v1=). */
    public static function sign(#[\SensitiveParameter] string $secret, string $payload, int $timestamp): string
    {
        return hash_hmac('sha256', $timestamp . '.' . $payload, $secret);
    }

    /** A whole header value for $payload signed at $timestamp, as the server builds it. */
    public static function signatureHeader(#[\SensitiveParameter] string $secret, string $payload, int $timestamp): string
    {
        return 't=' . $timestamp . ',v1=' . self::sign($secret, $payload, $timestamp);
    }

    /**
     * @return array{0: int, 1: list<string>} the timestamp and the v1 signatures (lower-case hex)
     */
    private static function parseHeader(?string $header): array
    {
        if ($header === null || trim($header) === '') {
            throw new SignatureVerificationException('missing ' . self::SIGNATURE_HEADER . ' header');
        }
        $timestamp = null;
        $signatures = [];
        foreach (explode(',', $header) as $part) {
            $pair = explode('=', trim($part), 2);
            if ($pair[0] === 't') {
                $timestamp = $pair[1] ?? '';
            } elseif ($pair[0] === 'v1' && preg_match('/^[0-9a-fA-F]{64}$/', $pair[1] ?? '')) {
                $signatures[] = strtolower($pair[1]);
            }
        }
        if ($timestamp === null || !preg_match('/^\d{1,12}$/', $timestamp) || $signatures === []) {
            throw new SignatureVerificationException('malformed ' . self::SIGNATURE_HEADER . ' header: expected t=<unix seconds>,v1=<hex>');
        }

        return [(int) $timestamp, $signatures];
    }
}
