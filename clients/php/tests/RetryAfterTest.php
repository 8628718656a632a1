<?php

declare(strict_types=1);

namespace Dossier\Tests;

use Dossier\Exception\RateLimitException;
use Dossier\Internal\Headers;

/** Retry-After as every Dossier client reads it (RFC 9110 section 10.2.3), odd values included. */
final class RetryAfterTest extends TestCase
{
    private const NOW = 1795528800.0; // 2026-11-24T14:00:00Z

    /**
     * The same table is in the Python, JavaScript and Ruby clients' tests: header value, seconds or null.
     *
     * @return array<string, array{string, float|null}>
     */
    public static function cases(): array
    {
        $cases = [
            ['120', 120.0],
            ['0', 0.0],
            [' 7 ', 7.0], // surrounding whitespace is not part of the value
            ['1.5', 1.5], // a decimal fraction is tolerated
            ['86400', 86400.0],
            ['86401', 86400.0], // capped at one day
            ['99999999999999999999999999', 86400.0],
            [str_repeat('9', 400), 86400.0],
            ['Tue, 24 Nov 2026 14:00:30 GMT', 30.0], // IMF-fixdate
            ['Tuesday, 24-Nov-26 14:00:30 GMT', 30.0], // obsolete RFC 850 form
            ['Tue Nov 24 14:00:30 2026', 30.0], // obsolete asctime form
            ['Sun Nov  1 14:00:00 2026', 0.0], // asctime, one-digit day; a past date is no wait
            ['Sun, 06 Nov 1994 08:49:37 GMT', 0.0],
            ['Sunday, 06-Nov-94 08:49:37 GMT', 0.0], // two-digit year: 1994, not 2094 (over 50 years ahead)
            ['Fri, 31 Dec 9999 23:59:59 GMT', 86400.0],
            // Garbage: null (a retry waits its backoff, a poll its poll interval).
            ['', null],
            ['   ', null],
            ['-5', null],
            ['+5', null],
            ['1e3', null],
            ['0x10', null],
            ['1_000', null],
            ['.5', null],
            ['5.', null],
            ['1 2', null],
            ['inf', null],
            ['Infinity', null],
            ['NaN', null],
            ['soon', null],
            ['tomorrow', null],
            ['2026-11-24T14:00:30Z', null], // RFC 3339 is not an HTTP-date
            ['Tue, 24 Nov 2026 14:00:30 +0000', null], // an HTTP-date is always GMT
            ['tue, 24 nov 2026 14:00:30 gmt', null], // HTTP-date is case-sensitive
            ['24 Nov 2026 14:00:30 GMT', null],
            ['Mon, 30 Feb 2026 14:00:00 GMT', null], // no such day
            ['Tue, 24 Nov 2026 24:00:00 GMT', null],
        ];
        $named = [];
        foreach ($cases as [$value, $seconds]) {
            $named[var_export(strlen($value) > 40 ? substr($value, 0, 20) . '…' : $value, true)] = [$value, $seconds];
        }

        return $named;
    }

    /** @dataProvider cases */
    public function testTheSharedTable(string $value, ?float $seconds): void
    {
        $this->assertSame($seconds, Headers::retryAfter(['retry-after' => $value], self::NOW));
    }

    public function testAbsentIsNull(): void
    {
        $this->assertNull(Headers::retryAfter([]));
    }

    public function testAHugeValueIsReadAsADayAndThrownAtOnce(): void
    {
        $this->server->script([self::error(429, 'rate_limited', 'slow down', ['Retry-After' => str_repeat('9', 400)]), self::success()]);
        try {
            $this->client()->account();
            $this->fail('expected RateLimitException');
        } catch (RateLimitException $e) {
            $this->assertSame(86400.0, $e->getRetryAfter());
        }
        $this->assertCount(1, $this->server->requests());
    }
}
