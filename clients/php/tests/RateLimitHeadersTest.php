<?php

declare(strict_types=1);

namespace Dossier\Tests;

use Dossier\BatchResult;
use Dossier\Response;
use Dossier\SearchResult;

/** RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset, read the same way by the four clients. */
final class RateLimitHeadersTest extends \PHPUnit\Framework\TestCase
{
    private const HEADERS = ['ratelimit-limit' => '100', 'ratelimit-remaining' => '99', 'ratelimit-reset' => '1'];

    public function testEveryAnswerReadsTheRateLimitItCarries(): void
    {
        $answers = [
            new SearchResult(200, self::HEADERS, ['status' => 'success', 'search_id' => 'srch_1'], '{}'),
            new BatchResult(200, self::HEADERS, ['status' => 'success', 'batch_id' => 'bat_1', 'items' => []], '{}'),
            new Response(200, self::HEADERS, ['status' => 'success', 'credits_remaining' => 3], '{}'),
        ];
        foreach ($answers as $answer) {
            $this->assertSame(['limit' => 100, 'remaining' => 99, 'reset' => 1], $answer->rateLimit(), $answer::class);
        }
    }

    public function testAMissingOrUnreadableHeaderIsNull(): void
    {
        // Read as the credit headers are: a whole number of ASCII digits, else null.
        $result = new SearchResult(200, ['ratelimit-limit' => '1.5', 'ratelimit-remaining' => '-1'], ['status' => 'success'], '{}');
        $this->assertSame(['limit' => null, 'remaining' => null, 'reset' => null], $result->rateLimit());
    }
}
