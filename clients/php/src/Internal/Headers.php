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
     * A count header (X-Credits-Spent, X-Credits-Remaining): a whole number of ASCII digits, surrounding spaces
     * ignored; anything else ("-1", "+7", "1.5", "1e2", blank) is null. As in the other clients.
     *
     * @param array<string, string> $headers names lower-cased
     */
    public static function count(array $headers, string $name): ?int
    {
        $value = trim((string) self::get($headers, $name), " \t");

        return preg_match('/^[0-9]+$/D', $value) ? (int) $value : null;
    }

    /** A longer Retry-After is read as this: one day, in seconds. */
    public const RETRY_AFTER_CAP = 86400.0;

    private const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    private const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
    private const TIME = '([0-9]{2}):([0-9]{2}):([0-9]{2})';

    /**
     * Retry-After (RFC 9110 section 10.2.3) in seconds, or null when absent or unreadable; read the same way
     * by the four Dossier clients. Delay-seconds ("120"; a decimal fraction such as "1.5" is tolerated) or an
     * HTTP-date ("Tue, 24 Nov 2026 14:00:30 GMT", or the obsolete RFC 850 and asctime forms) counted from
     * $now (a past date is 0), capped at RETRY_AFTER_CAP (one day). Anything else, such as "-5", "1e3" or
     * an RFC 3339 time, is garbage: null, so a retry waits its backoff and a poll its poll interval.
     *
     * @param array<string, string> $headers names lower-cased
     * @param float|null $now Unix time the date form counts from (default: now)
     */
    public static function retryAfter(array $headers, ?float $now = null): ?float
    {
        $value = self::get($headers, 'retry-after');
        if ($value === null) {
            return null;
        }
        $value = trim($value, " \t");
        if (preg_match('/^[0-9]+(\.[0-9]+)?$/D', $value)) {
            return min((float) $value, self::RETRY_AFTER_CAP);
        }
        $now ??= microtime(true);
        $date = self::httpDate($value, $now);

        return $date === null ? null : min(max(0.0, $date - $now), self::RETRY_AFTER_CAP);
    }

    /** An HTTP-date (RFC 9110 section 5.6.7) as a Unix time, or null. */
    private static function httpDate(string $value, float $now): ?float
    {
        $m = [];
        if (preg_match('/^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) ' . self::MONTH . ' ([0-9]{4}) ' . self::TIME . ' GMT$/D', $value, $m)) {
            [, $day, $month, $year, $hour, $minute, $second] = $m;
        } elseif (preg_match('/^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([0-9]{2})-' . self::MONTH . '-([0-9]{2}) ' . self::TIME . ' GMT$/D', $value, $m)) {
            [, $day, $month, $yy, $hour, $minute, $second] = $m;
            // Two digits: the year within 50 years from now, else the century before.
            $thisYear = (int) gmdate('Y', (int) $now);
            $year = $thisYear - $thisYear % 100 + (int) $yy;
            if ($year > $thisYear + 50) {
                $year -= 100;
            }
        } elseif (preg_match('/^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ' . self::MONTH . ' ([0-9]{2}| [0-9]) ' . self::TIME . ' ([0-9]{4})$/D', $value, $m)) {
            [, $month, $day, $hour, $minute, $second, $year] = $m;
        } else {
            return null;
        }
        [$year, $month, $day] = [(int) $year, array_search($month, self::MONTHS, true) + 1, (int) trim($day)];
        [$hour, $minute, $second] = [(int) $hour, (int) $minute, (int) $second];
        // No such day or time (30 Feb, 24:00:00): gmmktime() would roll it over.
        if (!checkdate($month, $day, $year) || $hour > 23 || $minute > 59 || $second > 59) {
            return null;
        }

        return (float) gmmktime($hour, $minute, $second, $month, $day, $year);
    }
}
