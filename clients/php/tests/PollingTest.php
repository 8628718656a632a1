<?php

declare(strict_types=1);

namespace Dossier\Tests;

use Dossier\Exception\PollTimeoutException;
use Dossier\Exception\SearchTimeoutException;
use Dossier\Exception\UnavailableException;
use Dossier\Internal\HttpTransport;

final class PollingTest extends TestCase
{
    public function testA202IsPolledUntilTheSearchIsDone(): void
    {
        $this->server->script([
            self::pending('srch_p1', '0.01', 4),
            self::pending('srch_p1', '0.01', 4),
            self::success([['e164' => '+14155552671', 'valid' => true]], 4, 'srch_p1'),
        ]);

        $result = $this->client()->verifyPhone('+14155552671');

        $this->assertTrue($result->isSuccess());
        $this->assertSame('srch_p1', $result->searchId);
        $this->assertSame('+14155552671', $result->results[0]['e164']);
        $this->assertSame(4, $result->creditsRemaining);
        $requests = $this->server->requests();
        $this->assertSame(
            [['POST', '/v1/verify/phone'], ['GET', '/v1/searches/srch_p1'], ['GET', '/v1/searches/srch_p1']],
            array_map(static fn (array $r): array => [$r['method'], $r['path']], $requests),
        );
        $this->assertArrayNotHasKey('idempotency-key', $requests[1]['headers']);
        $this->assertSame('Bearer dsk_test_key', $requests[1]['headers']['authorization']);
    }

    public function testRetryAfterOfThe202SetsThePollInterval(): void
    {
        $this->server->script([self::pending('srch_p2', '0.3'), self::success([], 9, 'srch_p2')]);

        $client = $this->client(['pollInterval' => 5.0]);
        $clock = FakeClock::in($client);
        $client->search(name: 'John Smith');

        $this->assertCount(2, $this->server->requests());
        $this->assertSame([0.3], $clock->sleeps, 'the Retry-After, not pollInterval');
    }

    public function testWithoutRetryAfterThePollIntervalDefaultsToOneSecond(): void
    {
        $this->server->script([self::pending('srch_p3', null), self::success([], 9, 'srch_p3')]);

        $client = new \Dossier\Client('dsk_test_key', baseUrl: $this->server->baseUrl);
        $clock = FakeClock::in($client);
        $client->search(name: 'John Smith');

        $this->assertCount(2, $this->server->requests());
        $this->assertSame([1.0], $clock->sleeps);
    }

    public function testTheWaitBetweenPolls(): void
    {
        // Retry-After, else pollInterval; at most 60 s (the longest wait a retry sleeps); never past the
        // deadline. The rule of the Python, JavaScript and Ruby clients too.
        $wait = static fn (?string $retryAfter, float $remaining = 600.0): float => HttpTransport::pollDelay(
            $retryAfter === null ? [] : ['retry-after' => $retryAfter],
            1.0,
            $remaining,
        );
        $this->assertSame(2.0, $wait('2'));
        $this->assertSame(0.25, $wait('0.25'));
        $this->assertSame(1.0, $wait(null));
        $this->assertSame(1.0, $wait('-1'), 'an unreadable Retry-After: the poll interval');
        $this->assertSame(1.0, $wait('soon'));
        $this->assertSame(60.0, $wait('3600'), 'a long Retry-After: the longest wait a retry sleeps');
        $this->assertSame(5.0, $wait('30', 5.0), 'never past the deadline');
    }

    public function testTheResultKeepsTheIdempotencyKeyItWasSentWithThroughPolling(): void
    {
        $this->server->script([
            self::pending('srch_k1', '0.01'),
            self::success([], 4, 'srch_k1'),
            self::success([], 4, 'srch_k2'),
            self::pending('srch_k3', '0.01'),
            self::success([], 4, 'srch_k4'),
        ]);
        $client = $this->client();

        $this->assertSame('order-42', $client->verifyPhone('+14155552671', idempotencyKey: 'order-42')->idempotencyKey);
        $generated = $client->verifyPhone('+14155552671');
        $this->assertSame($this->server->requests()[2]['headers']['idempotency-key'], $generated->idempotencyKey);
        $this->assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', (string) $generated->idempotencyKey);
        $this->assertSame('order-43', $client->verifyPhone('+14155552671', idempotencyKey: 'order-43', wait: false)->idempotencyKey);
        $this->assertNull($client->getSearch('srch_k4')->idempotencyKey, 'a GET sends no Idempotency-Key');
    }

    public function testWaitFalseReturnsThePendingSearchAtOnce(): void
    {
        $this->server->script([self::pending('srch_p4', '1', 2)]);

        $result = $this->client()->verifyPhone('+14155552671', wait: false);

        $this->assertTrue($result->isPending());
        $this->assertSame('pending', $result->status);
        $this->assertSame('srch_p4', $result->searchId);
        $this->assertSame(2, $result->creditsRemaining);
        $this->assertSame([], $result->results);
        $this->assertSame(202, $result->httpStatus);
        $requests = $this->server->requests();
        $this->assertCount(1, $requests);
        $this->assertSame('respond-async', $requests[0]['headers']['prefer']);
    }

    public function testGetSearchReturnsTheCurrentStateOrWaits(): void
    {
        $this->server->script([self::pending('srch_p5'), self::pending('srch_p5'), self::success([], 1, 'srch_p5')]);
        $client = $this->client();

        $this->assertTrue($client->getSearch('srch_p5')->isPending());
        $done = $client->getSearch('srch_p5', wait: true);

        $this->assertTrue($done->isSuccess());
        $this->assertCount(3, $this->server->requests());
    }

    public function testPollingGivesUpAtTheDeadline(): void
    {
        $this->server->script([], self::pending('srch_p6', '0.0625'));
        $client = $this->client(['pollTimeout' => 0.3]);
        $clock = FakeClock::in($client);

        try {
            $client->searchCompany(companyName: 'Acme');
            $this->fail('expected SearchTimeoutException');
        } catch (SearchTimeoutException $e) {
            $this->assertSame('srch_p6', $e->getSearchId());
            $this->assertTrue($e->getPendingResult()->isPending());
            $this->assertStringContainsString('still pending after 0.3 s', $e->getMessage());
        }
        // Polled every Retry-After until the budget was spent, the last wait cut to what was left.
        $this->assertCount(5, $clock->sleeps);
        $this->assertSame([0.0625, 0.0625, 0.0625, 0.0625], array_slice($clock->sleeps, 0, 4));
        $this->assertEqualsWithDelta(0.05, $clock->sleeps[4], 1e-9);
        $this->assertCount(6, $this->server->requests(), 'the search and a poll after each wait');
    }

    public function testThePerCallPollTimeoutOverridesTheClients(): void
    {
        $this->server->script([], self::pending('srch_p7', '0.05'));

        $this->expectException(SearchTimeoutException::class);
        $this->client(['pollTimeout' => 30.0])->verifyEmail('a@example.com', pollTimeout: 0.1);
    }

    public function testPollTimeoutExceptionAndItsDeprecatedNameSearchTimeoutExceptionBothCatchIt(): void
    {
        $this->server->script([], self::pending('srch_p7', '0.05'));
        $client = $this->client();
        try {
            $client->verifyEmail('a@example.com', pollTimeout: 0.1);
            $this->fail('expected PollTimeoutException');
        } catch (PollTimeoutException $e) {
            $this->assertSame('srch_p7', $e->getSearchId());
        }
        try {
            $client->verifyEmail('a@example.com', pollTimeout: 0.1);
            $this->fail('expected SearchTimeoutException');
        } catch (SearchTimeoutException $e) {
            $this->assertInstanceOf(PollTimeoutException::class, $e);
        }
    }

    public function testPollingGetsAreRetriedOn503And429(): void
    {
        $this->server->script([
            self::pending('srch_p8'),
            self::error(503, 'unavailable', 'redis down', ['Retry-After' => '0.01']),
            self::error(429, 'rate_limited', 'slow down', ['Retry-After' => '0.01']),
            self::success([], 3, 'srch_p8'),
        ]);

        $result = $this->client()->verifyPhone('+14155552671');

        $this->assertSame('srch_p8', $result->searchId);
        $this->assertCount(4, $this->server->requests());
    }

    public function testAFailedSearchRaisesUnavailableWithoutRepolling(): void
    {
        $failed = [
            'status' => 503,
            'headers' => ['Retry-After' => '1'],
            'body' => ['status' => 'error', 'error' => ['code' => 'unavailable', 'message' => 'the lookup failed; nothing was charged'], 'search_id' => 'srch_p9', 'credits_remaining' => 3, 'request_id' => 'req_f'],
        ];
        $this->server->script([self::pending('srch_p9'), $failed]);

        try {
            $this->client()->verifyPhone('+14155552671');
            $this->fail('expected UnavailableException');
        } catch (UnavailableException $e) {
            $this->assertSame('srch_p9', $e->getBody()['search_id']);
            $this->assertSame('the lookup failed; nothing was charged', $e->getMessage());
        }
        $this->assertCount(2, $this->server->requests());
    }
}
