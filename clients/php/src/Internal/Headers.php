<?php

declare(strict_types=1);

namespace Dossier\Internal;

/**
 * @internal header helpers; not part of the public API
 */
final class Headers
{
    /** @param array<string, string> $headers names lower-cased */
    public static function get(array $headers, string $name): ?string
    {
        return $headers[strtolower($name)] ?? null;
    }

    /**
     * Retry-After in seconds: delta-seconds (fractions tolerated) or an HTTP-date; null when absent or unparseable.
     *
     * @param array<string, string> $headers names lower-cased
     */
    public static function retryAfter(array $headers): ?float
    {
        $value = self::get($headers, 'retry-after');
        if ($value === null) {
            return null;
        }
        $value = trim($value);
        if (is_numeric($value)) {
            return max(0.0, (float) $value);
        }
        $time = strtotime($value);

        return $time === false ? null : max(0.0, (float) ($time - time()));
    }
}
