<?php

declare(strict_types=1);

namespace Dossier\Tests;

use Dossier\Exception\DossierException;
use Dossier\Exception\NotFoundException;
use Dossier\Exception\SignatureVerificationException;
use Dossier\Exception\ValidationException;
use Dossier\Webhook;

final class WebhooksTest extends TestCase
{
    private const HOOK = ['id' => 'wh_1', 'url' => 'https://203.0.113.10/dossier', 'events' => ['search.completed'], 'created_at' => '2026-11-23T09:00:00.000Z'];
    private const SECRET = 'whsec_3q2-7wVbQ0nLk9sYt4XcZr1mA8uHf6dJ5pGe0iBo2Nw';
    private const PAYLOAD = '{"id":"evt_1","type":"search.completed","created_at":"2026-11-23T09:00:00.000Z","data":{"search_id":"srch_1"}}';
    private const T = 1795000000;

    public function testCreateWebhook(): void
    {
        $this->server->script([
            ['status' => 201, 'body' => ['status' => 'success', 'webhook' => self::HOOK, 'secret' => 'whsec_abc']],
            ['status' => 201, 'body' => ['status' => 'success', 'webhook' => self::HOOK, 'secret' => 'whsec_def']],
        ]);
        $client = $this->client();

        $created = $client->createWebhook('https://203.0.113.10/dossier', ['search.completed']);
        $client->createWebhook('https://203.0.113.10/all');

        $this->assertSame(201, $created->httpStatus);
        $this->assertSame('wh_1', $created->webhook['id']);
        $this->assertSame('whsec_abc', $created->secret);
        [$first, $second] = $this->server->requests();
        $this->assertSame(['POST', '/v1/webhooks'], [$first['method'], $first['path']]);
        $this->assertSame(['url' => 'https://203.0.113.10/dossier', 'events' => ['search.completed']], $first['json']);
        $this->assertSame(['url' => 'https://203.0.113.10/all'], $second['json'], 'no events: all of them');
    }

    public function testARefusedUrl(): void
    {
        $this->server->script([self::error(400, 'validation_error', 'invalid request', details: [['field' => 'url', 'issue' => 'must not resolve to a private address']])]);

        try {
            $this->client()->createWebhook('https://127.0.0.1/hook');
            self::fail('expected a ValidationException');
        } catch (ValidationException $e) {
            $this->assertSame('url', $e->getDetails()[0]['field']);
        }
    }

    public function testListDeliveriesAndDelete(): void
    {
        $delivery = ['event_id' => 'evt_1', 'type' => 'search.completed', 'attempt' => 1, 'outcome' => 'delivered', 'status_code' => 200, 'error' => null, 'duration_ms' => 12, 'attempted_at' => '2026-11-23T09:01:00.000Z'];
        $this->server->script([
            ['body' => ['status' => 'success', 'webhooks' => [self::HOOK]]],
            ['body' => ['status' => 'success', 'deliveries' => [$delivery]]],
            ['body' => ['status' => 'success', 'webhook' => self::HOOK]],
            self::error(404, 'not_found', 'no such webhook'),
        ]);
        $client = $this->client();

        $this->assertSame(['wh_1'], array_column($client->listWebhooks()->webhooks, 'id'));
        $this->assertSame('delivered', $client->webhookDeliveries('wh_1')->deliveries[0]['outcome']);
        $this->assertSame('wh_1', $client->deleteWebhook('wh_1')->webhook['id']);
        try {
            $client->deleteWebhook('wh/../x');
            self::fail('expected a NotFoundException');
        } catch (NotFoundException) {
        }
        $this->assertSame(
            [['GET', '/v1/webhooks'], ['GET', '/v1/webhooks/wh_1/deliveries'], ['DELETE', '/v1/webhooks/wh_1'], ['DELETE', '/v1/webhooks/wh%2F..%2Fx']],
            array_map(static fn (array $r): array => [$r['method'], $r['path']], $this->server->requests()),
        );
    }

    public function testATestKeyAndTheModesOfKeys(): void
    {
        $this->server->script([
            ['status' => 201, 'body' => ['status' => 'success', 'api_key' => 'dsk_test_abc', 'key_id' => 'key_1']],
            ['body' => ['status' => 'success', 'keys' => [['id' => 'key_1', 'prefix' => 'dsk_test', 'name' => null, 'mode' => 'test']]]],
        ]);
        $client = $this->client();

        $this->assertSame('dsk_test_abc', $client->createKey(mode: 'test')->apiKey);
        $this->assertSame(['mode' => 'test'], $this->server->requests()[0]['json']);
        $this->assertSame(['test'], array_column($client->listKeys()->keys, 'mode'));
    }

    // ------------------------------------------------------------ Webhook::verify

    private static function header(int $t = self::T, string $secret = self::SECRET, string $payload = self::PAYLOAD): string
    {
        return 't=' . $t . ',v1=' . hash_hmac('sha256', $t . '.' . $payload, $secret);
    }

    public function testAValidSignatureReturnsTheEvent(): void
    {
        $event = Webhook::verify(self::PAYLOAD, self::header(), self::SECRET, now: self::T + 10);
        $this->assertSame('evt_1', $event['id']);
        $this->assertSame('srch_1', $event['data']['search_id']);
        $this->assertSame(self::header(), Webhook::signatureHeader(self::SECRET, self::PAYLOAD, self::T));
        $this->assertSame('evt_1', Webhook::verify(self::PAYLOAD, self::header(), self::SECRET, 300, self::T - 300)['id']);
    }

    public function testAnyOfSeveralV1Values(): void
    {
        $good = explode(',', self::header())[1];
        $header = 't=' . self::T . ',v1=' . str_repeat('0', 64) . ', ' . $good . ',v0=zz';
        $this->assertSame('evt_1', Webhook::verify(self::PAYLOAD, $header, self::SECRET, now: self::T)['id']);
    }

    public function testElementsWithoutAnEqualsSignAreIgnoredAsInTheOtherClients(): void
    {
        $good = self::header();
        foreach ([$good . ',', $good . ',garbage', 'garbage,' . $good, str_replace(',', ', ,', $good)] as $header) {
            $this->assertSame('evt_1', Webhook::verify(self::PAYLOAD, $header, self::SECRET, now: self::T)['id'], $header);
        }
    }

    public function testAForgedSignature(): void
    {
        $this->assertRefused('no v1 signature', fn () => Webhook::verify(self::PAYLOAD, self::header(secret: 'whsec_other'), self::SECRET, now: self::T));
        $this->assertRefused('no v1 signature', fn () => Webhook::verify(str_replace('srch_1', 'srch_2', self::PAYLOAD), self::header(), self::SECRET, now: self::T));
        // the timestamp is signed too: moving it breaks the signature
        $moved = str_replace('t=' . self::T, 't=' . (self::T + 1), self::header());
        $this->assertRefused('no v1 signature', fn () => Webhook::verify(self::PAYLOAD, $moved, self::SECRET, now: self::T));
    }

    public function testTheHexSignatureMayBeInEitherCaseAsInTheOtherClients(): void
    {
        // Hex is case-insensitive (RFC 4648 section 8); Python, JavaScript and Ruby accept both cases too.
        $good = hash_hmac('sha256', self::T . '.' . self::PAYLOAD, self::SECRET);
        $mixed = strtoupper(substr($good, 0, 32)) . substr($good, 32);
        foreach ([strtoupper($good), $mixed] as $candidate) {
            $this->assertSame('evt_1', Webhook::verify(self::PAYLOAD, 't=' . self::T . ',v1=' . $candidate, self::SECRET, now: self::T)['id']);
        }
        $forged = strtoupper(hash_hmac('sha256', self::T . '.' . self::PAYLOAD, 'whsec_other'));
        $this->assertRefused('no v1 signature', fn () => Webhook::verify(self::PAYLOAD, 't=' . self::T . ',v1=' . $forged, self::SECRET, now: self::T));
    }

    public function testAnExpiredOrFutureTimestamp(): void
    {
        $this->assertRefused('tolerance', fn () => Webhook::verify(self::PAYLOAD, self::header(), self::SECRET, now: self::T + 301));
        $this->assertRefused('tolerance', fn () => Webhook::verify(self::PAYLOAD, self::header(), self::SECRET, now: self::T - 301));
        $this->assertRefused('tolerance', fn () => Webhook::verify(self::PAYLOAD, self::header(), self::SECRET, 5, self::T + 6));
        $this->assertSame('evt_1', Webhook::verify(self::PAYLOAD, self::header(), self::SECRET, null, self::T + 10000)['id']);
    }

    public function testAMissingOrMalformedHeader(): void
    {
        foreach ([null, '', '   '] as $header) {
            $this->assertRefused('missing', fn () => Webhook::verify(self::PAYLOAD, $header, self::SECRET, now: self::T));
        }
        $v1 = explode(',', self::header())[1];
        foreach (['v1=abc', $v1, 't=' . self::T, 't=abc,' . $v1, 't=' . self::T . ',v1=xyz', 'garbage', 't=-5,' . $v1] as $header) {
            $this->assertRefused('malformed', fn () => Webhook::verify(self::PAYLOAD, $header, self::SECRET, now: self::T));
        }
    }

    public function testASignedNonJsonPayloadAndAnEmptySecret(): void
    {
        $this->assertRefused('not a JSON object', fn () => Webhook::verify('nope', self::header(payload: 'nope'), self::SECRET, now: self::T));
        $this->assertRefused('not a JSON object', fn () => Webhook::verify('[1]', self::header(payload: '[1]'), self::SECRET, now: self::T));
        $this->assertRefused('secret', fn () => Webhook::verify(self::PAYLOAD, self::header(), '', now: self::T));
    }

    public function testAnyValidlySignedObjectIsAcceptedEvenEmptyAndAnEmptyBodyIsNotAsInTheOtherClients(): void
    {
        $this->assertSame([], Webhook::verify('{}', self::header(payload: '{}'), self::SECRET, now: self::T));
        $this->assertSame([], Webhook::verify(" { } \n", self::header(payload: " { } \n"), self::SECRET, now: self::T));
        $this->assertSame(['0' => 'a'], Webhook::verify('{"0":"a"}', self::header(payload: '{"0":"a"}'), self::SECRET, now: self::T));
        foreach (['', '[]', 'null', '"{}"'] as $payload) {
            $this->assertRefused('not a JSON object', fn () => Webhook::verify($payload, self::header(payload: $payload), self::SECRET, now: self::T));
        }
    }

    private function assertRefused(string $message, callable $verify): void
    {
        try {
            $verify();
            self::fail('expected a SignatureVerificationException');
        } catch (SignatureVerificationException $e) {
            $this->assertInstanceOf(DossierException::class, $e);
            $this->assertStringContainsString($message, $e->getMessage());
        }
    }
}
