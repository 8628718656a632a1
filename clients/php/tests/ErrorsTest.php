<?php

declare(strict_types=1);

namespace Dossier\Tests;

use Dossier\Client;
use Dossier\Exception\ApiException;
use Dossier\Exception\AuthenticationException;
use Dossier\Exception\ConflictException;
use Dossier\Exception\DossierException;
use Dossier\Exception\InsufficientCreditsException;
use Dossier\Exception\NotFoundException;
use Dossier\Exception\RateLimitException;
use Dossier\Exception\UnavailableException;
use Dossier\Exception\ValidationException;

final class ErrorsTest extends TestCase
{
    /** @return array<string, array{int, string, class-string}> */
    public static function envelopes(): array
    {
        return [
            'invalid_json' => [400, 'invalid_json', ValidationException::class],
            'validation_error' => [400, 'validation_error', ValidationException::class],
            'unauthorized' => [401, 'unauthorized', AuthenticationException::class],
            'invalid_credentials' => [401, 'invalid_credentials', AuthenticationException::class],
            'insufficient_credits' => [402, 'insufficient_credits', InsufficientCreditsException::class],
            'not_found' => [404, 'not_found', NotFoundException::class],
            'method_not_allowed' => [405, 'method_not_allowed', ApiException::class],
            'email_taken' => [409, 'email_taken', ConflictException::class],
            'idempotency_conflict' => [409, 'idempotency_conflict', ConflictException::class],
            'payload_too_large' => [413, 'payload_too_large', ApiException::class],
            'unsupported_media_type' => [415, 'unsupported_media_type', ApiException::class],
            'rate_limited' => [429, 'rate_limited', RateLimitException::class],
            'internal_error' => [500, 'internal_error', ApiException::class],
            'unavailable' => [503, 'unavailable', UnavailableException::class],
        ];
    }

    /**
     * @dataProvider envelopes
     * @param class-string $class
     */
    public function testEveryErrorCodeMapsToItsException(int $status, string $code, string $class): void
    {
        $this->server->script([self::error($status, $code, "message for $code", ['Retry-After' => '7'], null, "req_$code")]);

        try {
            $this->client(['maxRetries' => 0])->verifyPhone('+14155552671');
            $this->fail("expected $class");
        } catch (ApiException $e) {
            $this->assertSame($class, $e::class);
            $this->assertInstanceOf(DossierException::class, $e);
            $this->assertSame($status, $e->getHttpStatus());
            $this->assertSame($status, $e->getCode());
            $this->assertSame($code, $e->getErrorCode());
            $this->assertSame("message for $code", $e->getMessage());
            $this->assertSame("req_$code", $e->getRequestId());
            $this->assertSame([], $e->getDetails());
            $this->assertSame($code, json_decode($e->getRawBody(), true)['error']['code']);
            $this->assertSame('error', $e->getBody()['status']);
            $this->assertSame(7.0, $e->getRetryAfter());
            $this->assertSame('7', $e->getHeader('Retry-After'));
        }
    }

    public function testInsufficientCreditsExceptionCarriesTheBalanceAsInTheOtherClients(): void
    {
        $this->server->script([self::error(402, 'insufficient_credits', 'this lookup costs 1', ['X-Credits-Spent' => '0', 'X-Credits-Remaining' => '3'])]);

        try {
            $this->client()->verifyPhone('+14155552671');
            $this->fail('expected InsufficientCreditsException');
        } catch (InsufficientCreditsException $e) {
            $this->assertSame(3, $e->getCreditsRemaining());
        }
    }

    public function testValidationExceptionCarriesFieldDetails(): void
    {
        $details = [
            ['field' => 'name', 'issue' => 'is required (or give one of email, phone, username)'],
            ['field' => 'age_range', 'issue' => 'must look like "30-40", "65+" or "-25"'],
        ];
        $this->server->script([self::error(400, 'validation_error', 'name is required', [], $details, 'req_v')]);

        try {
            $this->client()->searchPerson(ageRange: 'old');
            $this->fail('expected ValidationException');
        } catch (ValidationException $e) {
            $this->assertSame($details, $e->getDetails());
            $this->assertSame('validation_error', $e->getErrorCode());
            $this->assertSame('req_v', $e->getRequestId());
            $this->assertSame(400, $e->getHttpStatus());
        }
    }

    public function testRequestIdFallsBackToTheHeader(): void
    {
        $this->server->script([['status' => 404, 'headers' => ['X-Request-Id' => 'req_header'], 'body' => ['status' => 'error', 'error' => ['code' => 'not_found', 'message' => 'no such search']]]]);

        try {
            $this->client()->getSearch('srch_missing');
            $this->fail('expected NotFoundException');
        } catch (NotFoundException $e) {
            $this->assertSame('req_header', $e->getRequestId());
            $this->assertSame('no such search', $e->getMessage());
        }
    }

    public function testANonJsonErrorBodyIsStillAnApiException(): void
    {
        $this->server->script([['status' => 502, 'headers' => ['X-Request-Id' => 'req_proxy'], 'raw' => '<html>Bad Gateway</html>']]);

        try {
            $this->client(['maxRetries' => 0])->account(); // a GET's 502 is retried otherwise
            $this->fail('expected ApiException');
        } catch (ApiException $e) {
            $this->assertSame(ApiException::class, $e::class);
            $this->assertSame(502, $e->getHttpStatus());
            $this->assertNull($e->getErrorCode());
            $this->assertNull($e->getBody());
            $this->assertSame('<html>Bad Gateway</html>', $e->getRawBody());
            $this->assertSame('req_proxy', $e->getRequestId());
            $this->assertStringContainsString('HTTP 502', $e->getMessage());
        }
    }

    public function testANonJsonSuccessBodyIsAnApiException(): void
    {
        $this->server->script([['status' => 200, 'raw' => 'not json']]);

        $this->expectException(ApiException::class);
        $this->expectExceptionMessage('not a JSON object');
        $this->client()->account();
    }

    public function testARedirectIsAnApiExceptionWithItsStatusAsInTheOtherClients(): void
    {
        $this->server->script([
            ['status' => 301, 'headers' => ['Location' => '/v1/account'], 'body' => ['status' => 'success', 'moved' => true]],
            ['status' => 307, 'headers' => ['Location' => '/v1/verify/phone'], 'raw' => ''],
        ]);
        foreach ([301 => fn () => $this->client()->account(), 307 => fn () => $this->client()->verifyPhone('+14155552671')] as $status => $call) {
            try {
                $call();
                $this->fail("expected an ApiException for $status");
            } catch (ApiException $e) {
                $this->assertSame(ApiException::class, $e::class);
                $this->assertSame($status, $e->getHttpStatus());
            }
        }
        $this->assertCount(2, $this->server->requests(), 'neither Location was requested');
    }

    public function testASuccessBodyThatIsEmptyOrNotAnObjectIsAnApiExceptionAsInTheOtherClients(): void
    {
        foreach (['', '[1,2]', 'null', '"{}"'] as $raw) {
            $this->server->script([['status' => 200, 'raw' => $raw]]);
            try {
                $this->client()->account();
                $this->fail('expected an ApiException for ' . var_export($raw, true));
            } catch (ApiException $e) {
                $this->assertSame(ApiException::class, $e::class);
                $this->assertSame(200, $e->getHttpStatus());
                $this->assertSame($raw, $e->getRawBody());
            }
        }
    }

    /**
     * A paid lookup's answer without its status, search_id, credits_remaining or (once done) results is broken,
     * not "nothing found": the base ApiException (no error code), never a SearchResult with no results. As in the
     * other clients.
     */
    public function testA2xxThatIsNotASearchEnvelopeIsAnApiExceptionNotAnEmptyResult(): void
    {
        $this->assertNotAnEnvelope('search envelope', [
            [200, '{}'],
            [200, '{"status":"success","search_id":"srch_1","credits_remaining":9}'],
            [200, '{"status":"success","search_id":"srch_1","results":{},"credits_remaining":9}'],
            [200, '{"status":"done","search_id":"srch_1","results":[],"credits_remaining":9}'],
            [200, '{"status":"success","search_id":"srch_1","results":[]}'],
            [200, '{"status":"success","search_id":"","results":[],"credits_remaining":9}'],
            [202, '{"status":"pending","credits_remaining":9}'],
        ], [
            fn () => $this->client(['maxRetries' => 0])->verifyPhone('+14155552671'),
            fn () => $this->client(['maxRetries' => 0])->getSearch('srch_1'),
        ]);
    }

    public function testA2xxThatIsNotABatchEnvelopeIsAnApiException(): void
    {
        $this->assertNotAnEnvelope('batch envelope', [
            [200, '{}'],
            [200, '{"status":"success","batch_id":"bat_1","credits_remaining":9}'],
            [200, '{"status":"success","batch_id":"bat_1","items":[],"credits_remaining":"9"}'],
            [202, '{"status":"pending","items":[],"credits_remaining":9}'],
        ], [
            fn () => $this->client(['maxRetries' => 0])->batch([['kind' => 'phone', 'input' => ['phone' => '+14155552671']]]),
            fn () => $this->client(['maxRetries' => 0])->getBatch('bat_1'),
        ]);
    }

    /**
     * An account without its id, a key list that is no list, a new key or webhook without its secret: broken, not
     * empty. The base ApiException (no error code) with the status, request id and body, as a lookup's; as in the
     * other clients.
     */
    public function testAnyOther2xxThatIsNotItsDocumentedShapeIsAnApiException(): void
    {
        $account = '"account":{"id":"acct_1","email":"a@example.com","created_at":"2026-11-24T00:00:00.000Z"}';
        $url = $this->server->baseUrl;
        $cases = [
            [fn (Client $c) => $c->account(), [
                '{}', '{' . $account . ',"credits_remaining":1}', '{"status":"success","account":{},"credits_remaining":1}',
                '{"status":"success","account":{"id":""},"credits_remaining":1}', '{"status":"success",' . $account . '}',
                '{"status":"success",' . $account . ',"credits_remaining":"1"}',
            ]],
            [fn () => Client::register('a@example.com', 'password123', $url, maxRetries: 0), [
                '{"status":"success",' . $account . ',"credits_remaining":3}', '{"status":"success","api_key":"dsk_n","credits_remaining":3}',
            ]],
            [fn () => Client::login('a@example.com', 'password123', $url, maxRetries: 0), ['{"status":"success","key_id":"key_l"}', '{"status":"success","api_key":"dsk_l"}']],
            [fn (Client $c) => $c->createKey('ci'), ['{"status":"success","api_key":"","key_id":"key_k"}', '{}']],
            [fn (Client $c) => $c->listKeys(), ['{"status":"success"}', '{"status":"success","keys":{}}', '{"status":"success","keys":["key_1"]}']],
            [fn (Client $c) => $c->revokeKey('key_1'), ['{"status":"success"}', '{"status":"success","key":{}}']],
            [fn (Client $c) => $c->listSearches(), [
                '{"status":"success","searches":[]}', '{"status":"success","next_cursor":null}', '{"status":"success","searches":[],"next_cursor":7}',
            ]],
            [fn (Client $c) => $c->createWebhook('https://example.com/h'), ['{"status":"success","webhook":{"id":"wh_1"}}', '{"status":"success","secret":"whsec_x"}']],
            [fn (Client $c) => $c->listWebhooks(), ['{"status":"success"}', '{"status":"success","webhooks":null}']],
            [fn (Client $c) => $c->deleteWebhook('wh_1'), ['{"status":"success"}']],
            [fn (Client $c) => $c->webhookDeliveries('wh_1'), ['{"status":"success"}', '{"status":"success","deliveries":{}}']],
        ];
        $client = $this->client(['maxRetries' => 0]);
        foreach ($cases as [$call, $bodies]) {
            foreach ($bodies as $raw) {
                $this->server->script([['status' => 200, 'headers' => ['X-Request-Id' => 'req_broken'], 'raw' => $raw]]);
                try {
                    $call($client);
                    $this->fail("expected an ApiException for $raw");
                } catch (ApiException $e) {
                    $this->assertSame(ApiException::class, $e::class, $raw);
                    $this->assertSame([200, null, 'req_broken'], [$e->getHttpStatus(), $e->getErrorCode(), $e->getRequestId()], $raw);
                    $this->assertSame($raw, $e->getRawBody());
                    $this->assertSame(json_decode($raw, true), $e->getBody(), $raw);
                    $this->assertMatchesRegularExpression('/^the Dossier API answered HTTP 200 with a body that is not an? /', $e->getMessage());
                }
            }
        }
    }

    /**
     * @param list<array{int, string}> $answers
     * @param list<\Closure(): mixed> $calls
     */
    private function assertNotAnEnvelope(string $what, array $answers, array $calls): void
    {
        foreach ($answers as [$status, $raw]) {
            foreach ($calls as $call) {
                $this->server->script([['status' => $status, 'headers' => ['X-Request-Id' => 'req_broken'], 'raw' => $raw]]);
                try {
                    $call();
                    $this->fail("expected an ApiException for $raw");
                } catch (ApiException $e) {
                    $this->assertSame(ApiException::class, $e::class, $raw);
                    $this->assertSame([$status, null, 'req_broken'], [$e->getHttpStatus(), $e->getErrorCode(), $e->getRequestId()], $raw);
                    $this->assertSame($raw, $e->getRawBody());
                    $this->assertStringContainsString("not a $what", $e->getMessage());
                }
                $this->assertCount(1, $this->server->requests(), 'a 2xx is not retried');
            }
        }
    }

    public function testAuthenticationErrorsFromStaticLogin(): void
    {
        $this->server->script([self::error(401, 'invalid_credentials', 'wrong e-mail or password')]);

        $this->expectException(AuthenticationException::class);
        $this->expectExceptionMessage('wrong e-mail or password');
        \Dossier\Client::login('a@example.com', 'nope', baseUrl: $this->server->baseUrl);
    }
}
