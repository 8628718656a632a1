<?php

declare(strict_types=1);

namespace Dossier\Tests;

use Dossier\Client;
use Dossier\Exception\ApiConnectionException;
use Dossier\Exception\ApiException;
use Dossier\Exception\NotFoundException;
use Dossier\Exception\RateLimitException;
use Dossier\Exception\UnavailableException;
use Dossier\Exception\ValidationException;

final class RetryTest extends TestCase
{
    public function testA503IsRetriedWithTheSameIdempotencyKey(): void
    {
        $this->server->script([
            self::error(503, 'unavailable', 'queue saturated'),
            self::error(503, 'unavailable', 'queue saturated'),
            self::success([['e164' => '+14155552671']], 2),
        ]);

        $result = $this->client()->verifyPhone('+14155552671');

        $this->assertSame(2, $result->creditsRemaining);
        $requests = $this->server->requests();
        $this->assertCount(3, $requests);
        $keys = array_unique(array_map(static fn (array $r): string => $r['headers']['idempotency-key'], $requests));
        $this->assertCount(1, $keys, 'every retry must reuse the same Idempotency-Key');
        $this->assertSame(['phone' => '+14155552671'], $requests[2]['json']);
    }

    public function testTheCallersIdempotencyKeyIsReusedOnRetries(): void
    {
        $this->server->script([self::error(429, 'rate_limited', 'slow down', ['Retry-After' => '0']), self::success()]);

        $this->client()->search(name: 'John Smith', idempotencyKey: 'my-key-1');

        $this->assertSame(['my-key-1', 'my-key-1'], array_map(static fn (array $r): string => $r['headers']['idempotency-key'], $this->server->requests()));
    }

    public function testRetriesStopAtMaxRetries(): void
    {
        $this->server->script([], self::error(503, 'unavailable', 'down', [], null, 'req_last'));

        try {
            $this->client(['maxRetries' => 3])->verifyEmail('a@example.com');
            $this->fail('expected UnavailableException');
        } catch (UnavailableException $e) {
            $this->assertSame(503, $e->getHttpStatus());
            $this->assertSame('req_last', $e->getRequestId());
        }
        $this->assertCount(4, $this->server->requests());
    }

    public function testMaxRetriesZeroMeansOneAttempt(): void
    {
        $this->server->script([], self::error(503, 'unavailable'));

        $this->expectException(UnavailableException::class);
        try {
            $this->client(['maxRetries' => 0])->account();
        } finally {
            $this->assertCount(1, $this->server->requests());
        }
    }

    public function testBackoffIsExponentialWithFullJitterUnderTheCap(): void
    {
        $this->server->script([], self::error(503, 'unavailable'));
        $client = $this->client(['maxRetries' => 4, 'retryBaseDelay' => 0.04, 'retryMaxDelay' => 0.1]);
        $clock = FakeClock::in($client);

        try {
            $client->account();
            $this->fail('expected UnavailableException');
        } catch (UnavailableException) {
        }

        $this->assertCount(5, $this->server->requests());
        $this->assertCount(4, $clock->sleeps, 'a wait before each retry');
        // Retry n waits random(0, min(0.1, 0.04 * 2^n)): bounds 0.04, 0.08, 0.1, 0.1.
        foreach ([0.04, 0.08, 0.1, 0.1] as $n => $ceiling) {
            $this->assertGreaterThanOrEqual(0.0, $clock->sleeps[$n]);
            $this->assertLessThanOrEqual($ceiling, $clock->sleeps[$n], "retry $n waited too long");
        }
    }

    public function testRetryAfterIsHonouredOn429(): void
    {
        // Backoff is 0 in this client, so only Retry-After can explain a one-second wait.
        $this->server->script([
            self::error(429, 'rate_limited', 'over the rate', ['Retry-After' => '1']),
            self::success(),
        ]);
        $client = $this->client(['retryBaseDelay' => 0.0, 'retryMaxDelay' => 0.0]);
        $clock = FakeClock::in($client);

        $result = $client->search(name: 'John Smith');

        $this->assertTrue($result->isSuccess());
        $this->assertCount(2, $this->server->requests());
        $this->assertSame([1.0], $clock->sleeps);
    }

    public function testARetryAfterOver60SecondsIsThrownAtOnce(): void
    {
        // As the JavaScript and Ruby clients: not slept through (a Retry-After: 3600 would block for an hour).
        $this->server->script([
            self::error(429, 'rate_limited', 'over the rate', ['Retry-After' => '61']),
            self::error(503, 'unavailable', 'queue saturated', ['Retry-After' => '61']),
        ], self::success());
        $client = $this->client(['maxRetries' => 1]);
        $clock = FakeClock::in($client);

        try {
            $client->account();
            $this->fail('expected RateLimitException');
        } catch (RateLimitException $e) {
            $this->assertSame(61.0, $e->getRetryAfter());
        }
        try {
            $client->verifyPhone('+14155552671');
            $this->fail('expected UnavailableException');
        } catch (UnavailableException) {
        }
        $this->assertSame([], $clock->sleeps, 'no wait at all');
        $this->assertCount(2, $this->server->requests(), 'neither was retried');
    }

    public function testRateLimitExceptionCarriesRetryAfterWhenRetriesRunOut(): void
    {
        $this->server->script([], self::error(429, 'rate_limited', 'over the rate', ['Retry-After' => '0.05'], null, 'req_rl'));

        try {
            $this->client(['maxRetries' => 1])->listKeys();
            $this->fail('expected RateLimitException');
        } catch (RateLimitException $e) {
            $this->assertSame(0.05, $e->getRetryAfter());
            $this->assertSame('rate_limited', $e->getErrorCode());
            $this->assertSame(429, $e->getHttpStatus());
            $this->assertSame('req_rl', $e->getRequestId());
        }
        $this->assertCount(2, $this->server->requests());
    }

    public function testClientErrorsAreNotRetried(): void
    {
        $this->server->script([self::error(400, 'validation_error', 'bad', [], [['field' => 'phone', 'issue' => 'x']]), self::success()]);

        $this->expectException(ValidationException::class);
        try {
            $this->client()->verifyPhone('abc');
        } finally {
            $this->assertCount(1, $this->server->requests());
        }
    }

    public function testA408RequestTimeoutIsRetriedWhenTheRequestIsSafeToRepeat(): void
    {
        // The gateway's 408: the request did not arrive in time, so it was not acted on. A lookup (it carries its
        // Idempotency-Key), a GET and a DELETE are sent again, as after a 429 or a 503.
        $timeout = self::error(408, 'request_timeout', 'the request did not arrive in time; the connection is closed');
        $this->server->script([
            $timeout, self::success([], 9, 'srch_after_408'),
            $timeout, ['status' => 200, 'body' => self::accountBody()],
            $timeout, ['status' => 200, 'body' => ['status' => 'success', 'key' => ['id' => 'key_1']]],
        ]);
        $client = $this->client();

        $this->assertSame('srch_after_408', $client->verifyPhone('+14155552671', idempotencyKey: 'k-408')->searchId);
        $this->assertSame(1, $client->account()->creditsRemaining);
        $this->assertSame('key_1', $client->revokeKey('key_1')->key['id']);
        $requests = $this->server->requests();
        $this->assertCount(6, $requests);
        $this->assertSame(['k-408', 'k-408'], [$requests[0]['headers']['idempotency-key'], $requests[1]['headers']['idempotency-key']]);
    }

    public function testA408IsNotRetriedForAPostWithoutAnIdempotencyKey(): void
    {
        // register, login, createKey, createWebhook: a 408 may come from a proxy that passed part of it on.
        $this->server->script([self::error(408, 'request_timeout'), ['status' => 201, 'body' => ['status' => 'success', 'api_key' => 'dsk_x', 'key_id' => 'key_x']]]);

        try {
            $this->client()->createKey('ci');
            $this->fail('expected ApiException');
        } catch (ApiException $e) {
            $this->assertSame([408, 'request_timeout'], [$e->getHttpStatus(), $e->getErrorCode()]);
        }
        $this->assertCount(1, $this->server->requests());
    }

    public function test502And504AreRetriedWhenTheRequestIsSafeToRepeat(): void
    {
        // A load balancer's answer while a gateway pod restarts: a page of its own, not the API's envelope. A lookup
        // (it carries its Idempotency-Key), a GET and a DELETE are sent again, as after a 408.
        foreach ([502, 504] as $status) {
            $gateway = ['status' => $status, 'raw' => "<html><body>$status from the load balancer</body></html>"];
            $this->server->script([
                $gateway, self::success([], 9, "srch_after_$status"),
                $gateway, ['status' => 200, 'body' => ['status' => 'success', 'account' => ['id' => 'acc_1', 'email' => 'a@example.com', 'created_at' => '2026-11-24T00:00:00.000Z'], 'credits_remaining' => 1]],
                $gateway, ['status' => 200, 'body' => ['status' => 'success', 'key' => ['id' => 'key_1']]],
            ]);
            $client = $this->client();

            $this->assertSame("srch_after_$status", $client->verifyPhone('+14155552671', idempotencyKey: "k-$status")->searchId);
            $this->assertSame(1, $client->account()->creditsRemaining);
            $this->assertSame('key_1', $client->revokeKey('key_1')->key['id']);
            $requests = $this->server->requests();
            $this->assertCount(6, $requests);
            $this->assertSame(["k-$status", "k-$status"], [$requests[0]['headers']['idempotency-key'], $requests[1]['headers']['idempotency-key']]);
        }
    }

    public function testADeleteWhoseRetryFindsItGoneSucceeds(): void
    {
        // The first attempt deleted it but its answer was lost (a 502 or 504): the retry's 404 is success.
        foreach ([502, 504] as $status) {
            $lost = ['status' => $status, 'raw' => "<html>$status</html>"];
            $notFound = self::error(404, 'not_found', 'no such key');
            $this->server->script([$lost, $notFound, $lost, $notFound]);
            $client = $this->client();

            $revoked = $client->revokeKey('key_1');
            $this->assertSame(['success', null, 404], [$revoked->status, $revoked->key, $revoked->httpStatus]);
            $this->assertNotNull($revoked->requestId);
            $deleted = $client->deleteWebhook('wh_1');
            $this->assertSame(['success', null], [$deleted->status, $deleted->webhook]);
            $this->assertSame(
                ['/v1/auth/keys/key_1', '/v1/auth/keys/key_1', '/v1/webhooks/wh_1', '/v1/webhooks/wh_1'],
                array_map(static fn (array $r): string => $r['path'], $this->server->requests()),
            );
        }
    }

    public function testA404OnTheFirstAttemptOfADeleteIsStillNotFound(): void
    {
        $this->server->script([self::error(404, 'not_found', 'no such key'), self::error(404, 'not_found', 'no such key')]);
        $client = $this->client();
        foreach ([static fn () => $client->revokeKey('key_1'), static fn () => $client->deleteWebhook('wh_1')] as $call) {
            try {
                $call();
                $this->fail('a first 404 must throw');
            } catch (NotFoundException) {
            }
        }
        $this->assertCount(2, $this->server->requests());
    }

    public function test502And504AreNotRetriedForAPostWithoutAnIdempotencyKeyAndThrownAfterTheRetries(): void
    {
        foreach ([502, 504] as $status) {
            $gateway = ['status' => $status, 'raw' => "<html>$status</html>"];
            $this->server->script([$gateway, ['status' => 201, 'body' => ['status' => 'success', 'api_key' => 'dsk_x', 'key_id' => 'key_x']]]);
            try {
                $this->client()->createKey('ci');
                $this->fail('expected ApiException');
            } catch (ApiException $e) {
                $this->assertSame([$status, null], [$e->getHttpStatus(), $e->getErrorCode()]);
            }
            $this->assertCount(1, $this->server->requests(), 'a POST the gateway may have acted on is not re-sent');

            $this->server->script([], $gateway);
            try {
                $this->client(['maxRetries' => 2])->account();
                $this->fail('expected ApiException');
            } catch (ApiException $e) {
                $this->assertSame([$status, null], [$e->getHttpStatus(), $e->getErrorCode()]);
            }
            $this->assertCount(3, $this->server->requests());
        }
    }

    public function testA408IsThrownOnceTheRetriesAreUsedUp(): void
    {
        $this->server->script([], self::error(408, 'request_timeout'));

        try {
            $this->client(['maxRetries' => 2])->account();
            $this->fail('expected ApiException');
        } catch (ApiException $e) {
            $this->assertSame(408, $e->getHttpStatus());
        }
        $this->assertCount(3, $this->server->requests());
    }

    public function testConnectionRefusedIsRetriedThenRaised(): void
    {
        $client = new Client('dsk_test', baseUrl: 'http://127.0.0.1:' . FakeServer::freePort(), maxRetries: 2, retryBaseDelay: 0.01, retryMaxDelay: 0.02);
        $clock = FakeClock::in($client);

        try {
            $client->verifyPhone('+14155552671');
            $this->fail('expected ApiConnectionException');
        } catch (ApiConnectionException $e) {
            $this->assertSame(3, $e->getAttempts());
            $this->assertSame(7, $e->getCurlErrno()); // CURLE_COULDNT_CONNECT
            $this->assertStringContainsString('after 3 attempt(s)', $e->getMessage());
        }
        $this->assertCount(2, $clock->sleeps, 'a backoff before each retry');
    }

    public function testConnectionRefusedIsRetriedEvenForRegister(): void
    {
        // Nothing reached the server, so repeating a non-idempotent POST is safe.
        try {
            Client::register('a@example.com', 'password1', baseUrl: 'http://127.0.0.1:' . FakeServer::freePort(), maxRetries: 1);
            $this->fail('expected ApiConnectionException');
        } catch (ApiConnectionException $e) {
            $this->assertSame(2, $e->getAttempts());
        }
    }

    public function testATlsCertificateErrorIsNotRetriedAsInTheOtherClients(): void
    {
        // Not transient: asking again meets the same certificate. Python, JavaScript and Ruby give up at once too.
        $dir = sys_get_temp_dir() . '/dossier-php-tls-' . getmypid() . '-' . bin2hex(random_bytes(4));
        mkdir($dir, 0700, true);
        $count = $dir . '/connections';
        $process = proc_open([PHP_BINARY, __DIR__ . '/fixtures/tls_server.php', $count], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        $this->assertIsResource($process);
        try {
            $port = (int) fgets($pipes[1]);
            $this->assertGreaterThan(0, $port, 'the TLS listener is up');
            $client = new Client('dsk_test', baseUrl: 'https://127.0.0.1:' . $port, maxRetries: 2, retryBaseDelay: 0.01, retryMaxDelay: 0.02);
            foreach (['a GET' => static fn () => $client->account(), 'a lookup POST' => static fn () => $client->verifyPhone('+14155552671')] as $what => $call) {
                try {
                    $call();
                    $this->fail('expected ApiConnectionException');
                } catch (ApiConnectionException $e) {
                    $this->assertSame(1, $e->getAttempts(), $what . ' is not retried');
                    $this->assertSame(60, $e->getCurlErrno()); // CURLE_PEER_FAILED_VERIFICATION
                }
            }
            $this->assertSame('2', file_get_contents($count));
        } finally {
            proc_terminate($process);
            proc_close($process);
            array_map('unlink', glob($dir . '/*') ?: []);
            rmdir($dir);
        }
    }

    public function testATimedOutLookupIsRetriedWithTheSameIdempotencyKey(): void
    {
        $slow = self::success() + ['delay' => 0.6];
        $this->server->script([$slow, self::success([], 50)]);

        $result = $this->client(['timeout' => 0.25])->verifyPhone('+14155552671');

        $this->assertSame(50, $result->creditsRemaining);
        $requests = $this->server->requests();
        $this->assertCount(2, $requests);
        $this->assertSame($requests[0]['headers']['idempotency-key'], $requests[1]['headers']['idempotency-key']);
    }

    public function testTheTimeoutBoundsTheWholeAttemptEvenWhenTheServerTricklesBytes(): void
    {
        // Every byte of the answer comes within 0.05 s, the whole answer takes 5 s: with timeout 0.5 the
        // attempt gives up (as in the Python, JavaScript and Ruby clients) instead of reading on.
        $trickling = ['status' => 200, 'trickle' => 0.05, 'pad' => 100, 'body' => ['status' => 'success', 'account' => ['id' => 'acc_1'], 'credits_remaining' => 5]];
        $this->server->script([$trickling, $trickling]);

        try {
            $this->client(['timeout' => 0.5, 'maxRetries' => 1])->account();
            $this->fail('expected ApiConnectionException');
        } catch (ApiConnectionException $e) {
            $this->assertSame(2, $e->getAttempts());
            $this->assertSame(28, $e->getCurlErrno()); // CURLE_OPERATION_TIMEDOUT
        }
        $this->assertCount(2, $this->server->requests());
    }

    public function testATimedOutPostWithoutIdempotencyKeyIsNotRepeated(): void
    {
        $this->server->script([['status' => 201, 'delay' => 0.6, 'body' => ['status' => 'success', 'api_key' => 'dsk_x', 'key_id' => 'key_x']]]);

        try {
            $this->client(['timeout' => 0.25])->createKey('ci');
            $this->fail('expected ApiConnectionException');
        } catch (ApiConnectionException $e) {
            $this->assertSame(1, $e->getAttempts());
            $this->assertSame(28, $e->getCurlErrno()); // CURLE_OPERATION_TIMEDOUT
        }
        $this->assertCount(1, $this->server->requests());
    }
}
