<?php

declare(strict_types=1);

namespace Dossier\IntegrationTests;

use Dossier\Client;
use Dossier\Exception\AuthenticationException;
use Dossier\Exception\ConflictException;
use Dossier\Exception\InsufficientCreditsException;
use Dossier\Exception\NotFoundException;
use Dossier\Exception\SignatureVerificationException;
use Dossier\Exception\ValidationException;
use Dossier\Response;
use Dossier\Webhook;
use PHPUnit\Framework\TestCase;

/**
 * Runs against a real gateway + worker. DOSSIER_BASE_URL must be set (these tests fail, never
 * skip, without it); the accounts they create must start with SIGNUP_CREDITS=3.
 */
final class GatewayTest extends TestCase
{
    private const PHONE = '+14155552671';
    private const PASSWORD = 'correct horse battery staple';

    private string $baseUrl;

    protected function setUp(): void
    {
        $url = getenv('DOSSIER_BASE_URL');
        if (!is_string($url) || $url === '') {
            self::fail('DOSSIER_BASE_URL is not set: point it at a running Dossier gateway (with SIGNUP_CREDITS=3)');
        }
        $this->baseUrl = $url;
    }

    public function testRegisterReturnsAKeyAndTheSignupCredits(): void
    {
        $email = self::uniqueEmail();
        $registered = Client::register($email, self::PASSWORD, baseUrl: $this->baseUrl);

        $this->assertSame(201, $registered->httpStatus);
        $this->assertStringStartsWith('dsk_', $registered->apiKey);
        $this->assertSame(3, $registered->creditsRemaining);
        $this->assertSame($email, $registered->account['email']);
        $this->assertNotEmpty($registered->requestId);

        $account = $this->client($registered)->account();
        $this->assertSame($registered->account['id'], $account->account['id']);
        $this->assertSame(3, $account->creditsRemaining);

        try {
            Client::register(strtoupper($email), self::PASSWORD, baseUrl: $this->baseUrl);
            $this->fail('expected ConflictException');
        } catch (ConflictException $e) {
            $this->assertSame('email_taken', $e->getErrorCode());
            $this->assertSame(409, $e->getHttpStatus());
        }
    }

    public function testPhoneLookupsSpendOneCreditEachUntilInsufficientCredits(): void
    {
        $client = $this->client($this->register());

        foreach ([2, 1, 0] as $expected) {
            $result = $client->verifyPhone(self::PHONE);
            $this->assertSame('success', $result->status);
            $this->assertStringStartsWith('srch_', $result->searchId);
            $this->assertCount(1, $result->results);
            $this->assertSame(self::PHONE, $result->results[0]['e164']);
            $this->assertTrue($result->results[0]['valid']);
            $this->assertSame($expected, $result->creditsRemaining);
            $this->assertSame(1, $result->creditsSpent);
            $this->assertNotEmpty($result->sources);
            // The key's rate limit, as every answer reports it (the gateway's default burst: 100).
            $this->assertSame(100, $result->rateLimit()['limit']);
            $this->assertIsInt($result->rateLimit()['remaining']);
            $this->assertIsInt($result->rateLimit()['reset']);
        }

        try {
            $client->verifyPhone(self::PHONE);
            $this->fail('expected InsufficientCreditsException');
        } catch (InsufficientCreditsException $e) {
            $this->assertSame(402, $e->getHttpStatus());
            $this->assertSame('insufficient_credits', $e->getErrorCode());
            $this->assertNotEmpty($e->getRequestId());
            $this->assertSame(0, $e->getCreditsRemaining());
        }
        $account = $client->account();
        $this->assertSame(0, $account->creditsRemaining);
        $this->assertSame(100, $account->rateLimit()['limit']);
    }

    public function testTheGenericSearchFormAndIdempotentReplays(): void
    {
        $client = $this->client($this->register());

        $first = $client->search(query: self::PHONE, type: 'phone', idempotencyKey: 'php-it-' . bin2hex(random_bytes(6)));
        $this->assertSame(self::PHONE, $first->results[0]['e164']);
        $this->assertSame(2, $first->creditsRemaining);

        $key = 'php-it-' . bin2hex(random_bytes(6));
        $charged = $client->verifyPhone(self::PHONE, idempotencyKey: $key);
        $replay = $client->verifyPhone(self::PHONE, idempotencyKey: $key);
        $this->assertSame($charged->searchId, $replay->searchId);
        $this->assertTrue($replay->replayed);
        $this->assertSame(0, $replay->creditsSpent);
        $this->assertSame(1, $client->account()->creditsRemaining, 'a replay must not charge again');

        try {
            $client->verifyPhone('+14155552672', idempotencyKey: $key);
            $this->fail('expected ConflictException');
        } catch (ConflictException $e) {
            $this->assertSame('idempotency_conflict', $e->getErrorCode());
        }
    }

    public function testTheSearchHistoryPagesNewestFirst(): void
    {
        $client = $this->client($this->register());
        $done = [];
        for ($i = 0; $i < 3; $i++) {
            $done[] = $client->verifyPhone(self::PHONE)->searchId;
        }
        $newestFirst = array_reverse($done);

        $first = $client->listSearches(kind: 'phone', limit: 2);
        $this->assertSame(array_slice($newestFirst, 0, 2), array_column($first->searches, 'search_id'));
        $this->assertSame('succeeded', $first->searches[0]['status']);
        $this->assertIsString($first->nextCursor);
        $this->assertSame($newestFirst, array_column(iterator_to_array($client->eachSearch(kind: 'phone', limit: 2), false), 'search_id'));
        $this->assertSame([], $client->listSearches(kind: 'email')->searches);
        // DateTimeInterface filters reach the gateway as RFC 3339 date-times it accepts.
        $dayAgo = new \DateTimeImmutable('-1 day');
        $this->assertSame($newestFirst, array_column($client->listSearches(kind: 'phone', since: $dayAgo)->searches, 'search_id'));
        $this->assertSame([], $client->listSearches(kind: 'phone', until: $dayAgo)->searches);
        $this->expectException(ValidationException::class);
        $client->listSearches(limit: 0);
    }

    public function testValidationErrorsCarryFieldDetails(): void
    {
        $client = $this->client($this->register());

        try {
            $client->verifyPhone('abc');
            $this->fail('expected ValidationException');
        } catch (ValidationException $e) {
            $this->assertSame('validation_error', $e->getErrorCode());
            $this->assertContains('phone', array_column($e->getDetails(), 'field'));
            $this->assertNotEmpty($e->getRequestId());
        }

        try {
            $client->searchPerson(location: 'Austin, TX');
            $this->fail('expected ValidationException');
        } catch (ValidationException $e) {
            $this->assertContains('name', array_column($e->getDetails(), 'field'));
        }

        try {
            $client->search(query: 'John Smith', type: 'planet');
            $this->fail('expected ValidationException');
        } catch (ValidationException $e) {
            $this->assertContains('type', array_column($e->getDetails(), 'field'));
        }

        // top: chooses the sites a username is checked on: without a username the gateway refuses it, naming it.
        try {
            $client->searchPerson(name: 'John Smith', top: 5);
            $this->fail('expected ValidationException');
        } catch (ValidationException $e) {
            $this->assertContains('top', array_column($e->getDetails(), 'field'));
        }
        $this->assertSame(3, $client->account()->creditsRemaining);
    }

    public function testKeysLoginAndARevokedKey(): void
    {
        $email = self::uniqueEmail();
        $registered = Client::register($email, self::PASSWORD, baseUrl: $this->baseUrl);
        $client = $this->client($registered);

        $loggedIn = Client::login($email, self::PASSWORD, baseUrl: $this->baseUrl);
        $this->assertStringStartsWith('dsk_', $loggedIn->apiKey);
        $this->assertNotSame($registered->apiKey, $loggedIn->apiKey);
        $this->assertStringStartsWith('key_', $loggedIn->keyId);

        $created = $client->createKey('php-integration');
        $this->assertSame(201, $created->httpStatus);
        $this->assertStringStartsWith('dsk_', $created->apiKey);

        $keys = $client->listKeys()->keys;
        $this->assertCount(3, $keys);
        $byId = array_column($keys, null, 'id');
        $this->assertSame('php-integration', $byId[$created->keyId]['name']);
        $this->assertNull($byId[$created->keyId]['revoked_at']);

        $revoked = $client->revokeKey($created->keyId);
        $this->assertSame($created->keyId, $revoked->key['id']);
        $this->assertNotNull($revoked->key['revoked_at']);

        try {
            (new Client($created->apiKey, baseUrl: $this->baseUrl))->account();
            $this->fail('expected AuthenticationException');
        } catch (AuthenticationException $e) {
            $this->assertSame(401, $e->getHttpStatus());
            $this->assertSame('unauthorized', $e->getErrorCode());
            $this->assertNotEmpty($e->getRequestId());
        }

        // The login key still works; a wrong password is invalid_credentials.
        $this->assertSame(3, (new Client($loggedIn->apiKey, baseUrl: $this->baseUrl))->account()->creditsRemaining);
        try {
            Client::login($email, 'wrong password!', baseUrl: $this->baseUrl);
            $this->fail('expected AuthenticationException');
        } catch (AuthenticationException $e) {
            $this->assertSame('invalid_credentials', $e->getErrorCode());
        }
    }

    public function testAsyncLookupThenGetSearchUntilDone(): void
    {
        $client = $this->client($this->register());

        $pending = $client->verifyPhone(self::PHONE, wait: false);
        $this->assertSame(202, $pending->httpStatus);
        $this->assertSame('pending', $pending->status);
        $this->assertStringStartsWith('srch_', $pending->searchId);

        $deadline = microtime(true) + 10;
        $result = $client->getSearch($pending->searchId);
        while ($result->isPending() && microtime(true) < $deadline) {
            usleep(100_000);
            $result = $client->getSearch($pending->searchId);
        }
        $this->assertSame('success', $result->status);
        $this->assertSame($pending->searchId, $result->searchId);
        $this->assertSame(self::PHONE, $result->results[0]['e164']);
        $this->assertSame(2, $result->creditsRemaining);

        $second = $client->verifyPhone(self::PHONE, wait: false);
        $done = $client->getSearch($second->searchId, wait: true, pollTimeout: 10.0);
        $this->assertTrue($done->isSuccess());
        $this->assertSame(1, $done->creditsRemaining);

        try {
            $client->getSearch('srch_doesnotexist');
            $this->fail('expected NotFoundException');
        } catch (NotFoundException $e) {
            $this->assertSame('not_found', $e->getErrorCode());
        }
    }

    public function testAPersonSearchReturnsNoResultsAndSpendsNothing(): void
    {
        $client = $this->client($this->register());

        $result = $client->search(name: 'John Smith');

        $this->assertSame('success', $result->status);
        $this->assertSame([], $result->results);
        $this->assertSame(3, $result->creditsRemaining);
        $this->assertSame(0, $result->creditsSpent);
        $this->assertSame(3, $client->account()->creditsRemaining);

        $generic = $client->search(query: 'John Smith', type: 'person', country: 'US');
        $this->assertSame([], $generic->results);
        $this->assertSame(3, $generic->creditsRemaining);

        // No sanctions list is imported: a screen finds no one, and costs nothing.
        $screened = $client->screen('John Smith', birthYear: 1970, country: 'US');
        $this->assertSame(['success', [], 3], [$screened->status, $screened->results, $screened->creditsRemaining]);
    }

    public function testABatchWithAValidPhoneAndAnInvalidItem(): void
    {
        $client = $this->client($this->register());

        $batch = $client->batch([
            ['kind' => 'phone', 'input' => ['phone' => self::PHONE]],
            ['kind' => 'phone', 'input' => ['phone' => 'abc']],
        ]);

        $this->assertSame('success', $batch->status);
        $this->assertMatchesRegularExpression('/^bat_/', (string) $batch->batchId);
        $this->assertCount(2, $batch->items);
        [$valid, $invalid] = $batch->items;
        $this->assertTrue($valid->isSuccess());
        $this->assertMatchesRegularExpression('/^srch_/', (string) $valid->searchId);
        $this->assertSame(self::PHONE, $valid->results[0]['e164']);
        $this->assertTrue($invalid->isError());
        $this->assertInstanceOf(ValidationException::class, $invalid->error);
        $this->assertSame('validation_error', $invalid->error->getErrorCode());
        $this->assertContains('phone', array_column($invalid->error->getDetails(), 'field'));
        $this->assertSame(2, $batch->creditsRemaining, 'the valid item costs one credit, the invalid none');
        $this->assertSame(2, $client->account()->creditsRemaining);

        $again = $client->getBatch((string) $batch->batchId);
        $this->assertSame('success', $again->status);
        $this->assertSame($batch->batchId, $again->batchId);
        $this->assertSame([$valid->searchId, null], array_map(static fn ($i) => $i->searchId, $again->items));
        $this->assertSame('validation_error', $again->items[1]->error?->getErrorCode());

        try {
            $client->batch(array_fill(0, 101, ['kind' => 'phone', 'input' => ['phone' => self::PHONE]]));
            self::fail('101 requests must be refused');
        } catch (ValidationException $e) {
            $this->assertSame(400, $e->getHttpStatus());
        }
        try {
            $client->getBatch('bat_doesnotexist');
            self::fail('an unknown batch must be a 404');
        } catch (NotFoundException $e) {
            $this->assertSame('not_found', $e->getErrorCode());
        }
        $this->assertSame(2, $client->account()->creditsRemaining, 'refused batches charge nothing');
    }

    public function testWebhooksCreateListDeliveriesDeleteAndASignature(): void
    {
        $client = $this->client($this->register());
        $url = 'https://203.0.113.10/dossier-php'; // a documentation address: public, resolves without DNS

        $created = $client->createWebhook($url, ['search.completed']);
        $this->assertSame(201, $created->httpStatus);
        $hook = $created->webhook;
        $this->assertMatchesRegularExpression('/^wh_/', $hook['id']);
        $this->assertSame($url, $hook['url']);
        $this->assertSame(['search.completed'], $hook['events']);
        $this->assertMatchesRegularExpression('/^whsec_/', $created->secret);

        $listed = $client->listWebhooks()->webhooks;
        $this->assertSame([$hook['id']], array_column($listed, 'id'));
        $this->assertArrayNotHasKey('secret', $listed[0], 'the secret is shown only at creation');
        $this->assertSame([], $client->webhookDeliveries($hook['id'])->deliveries);

        try {
            $client->createWebhook('https://127.0.0.1/hooks');
            self::fail('a loopback URL must be refused');
        } catch (ValidationException $e) {
            $this->assertContains('url', array_column($e->getDetails(), 'field'));
        }

        // A delivery signed as the server signs it (HMAC-SHA256 of "<t>.<raw body>" keyed with the whsec_ string).
        $payload = (string) json_encode(['id' => 'evt_1', 'type' => 'search.completed', 'created_at' => gmdate('c'), 'data' => ['search_id' => 'srch_1']]);
        $t = time();
        $header = 't=' . $t . ',v1=' . hash_hmac('sha256', $t . '.' . $payload, $created->secret);
        $this->assertSame('evt_1', Webhook::verify($payload, $header, $created->secret)['id']);
        try {
            Webhook::verify($payload, $header, 'whsec_other');
            self::fail('another secret must not verify');
        } catch (SignatureVerificationException) {
        }

        $this->assertSame($hook['id'], $client->deleteWebhook($hook['id'])->webhook['id']);
        $this->assertSame([], $client->listWebhooks()->webhooks);
        try {
            $client->deleteWebhook($hook['id']);
            self::fail('a deleted webhook is gone');
        } catch (NotFoundException) {
        }
        $this->assertSame(3, $client->account()->creditsRemaining, 'webhooks cost nothing');
    }

    public function testATestKeyLooksUpForFree(): void
    {
        $client = $this->client($this->register());

        $created = $client->createKey('php-sandbox', 'test');
        $this->assertMatchesRegularExpression('/^dsk_test_/', $created->apiKey);
        $modes = array_column($client->listKeys()->keys, 'mode', 'id');
        $this->assertSame('test', $modes[$created->keyId]);
        $kinds = array_values(array_unique(array_values($modes)));
        sort($kinds);
        $this->assertSame(['live', 'test'], $kinds, 'the signup key is live');

        $sandbox = new Client($created->apiKey, baseUrl: $this->baseUrl, timeout: 15.0);
        $result = $sandbox->verifyPhone('+15555550100');
        $this->assertSame('success', $result->status);
        $this->assertSame('+15555550100', $result->results[0]['e164']);
        $this->assertSame(0, $result->creditsSpent);
        $this->assertSame(3, $result->creditsRemaining);
        $this->assertSame(3, $client->account()->creditsRemaining, "a test key's lookup is free");
    }

    public function testTheGatewayEchoesTheCallersRequestId(): void
    {
        $rid = 'php-it/' . bin2hex(random_bytes(8));
        $registered = Client::register(self::uniqueEmail(), self::PASSWORD, baseUrl: $this->baseUrl, requestId: $rid);
        $this->assertSame($rid, $registered->requestId);
        $client = $this->client($registered);
        $this->assertSame($rid, $client->listKeys(requestId: $rid)->requestId);
        try {
            $client->getSearch('srch_doesnotexist', requestId: $rid);
            $this->fail('expected NotFoundException');
        } catch (NotFoundException $e) {
            $this->assertSame($rid, $e->getRequestId());
        }
        $this->assertNotSame($rid, $client->account()->requestId, 'without one, the gateway makes one up');
    }

    private function register(): Response
    {
        return Client::register(self::uniqueEmail(), self::PASSWORD, baseUrl: $this->baseUrl);
    }

    private function client(Response $registered): Client
    {
        return new Client($registered->apiKey, baseUrl: $this->baseUrl, timeout: 15.0);
    }

    private static function uniqueEmail(): string
    {
        return sprintf('php-it-%s-%s@example.com', date('YmdHis'), bin2hex(random_bytes(5)));
    }
}
