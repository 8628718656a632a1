<?php

declare(strict_types=1);

namespace Dossier\Tests;

use Dossier\Client;
use Dossier\Exception\InvalidArgumentException;

/** The caller's own X-Request-Id (API.md: echoed by the gateway when it is 1–128 safe characters). */
final class RequestIdTest extends TestCase
{
    private const RID = 'order-42/attempt:1';

    /** An answer as the gateway gives it to a request carrying RID: the id echoed. */
    private static function echoed(array $body, int $status = 200): array
    {
        return ['status' => $status, 'headers' => ['X-Request-Id' => self::RID], 'body' => ['status' => 'success'] + $body];
    }

    public function testEveryMethodSendsTheCallersRequestId(): void
    {
        $c = $this->client();
        $rid = self::RID;
        $url = $this->server->baseUrl;
        $search = self::success(headers: ['X-Request-Id' => $rid]);
        $batch = self::echoed(['batch_id' => 'bat_1', 'items' => [], 'credits_remaining' => 1]);
        $calls = [
            [self::echoed(['api_key' => 'dsk_n', 'account' => self::ACCOUNT, 'credits_remaining' => 3], 201), fn () => Client::register('a@example.com', 'password123', $url, requestId: $rid)],
            [self::echoed(['api_key' => 'dsk_l', 'key_id' => 'key_l']), fn () => Client::login('a@example.com', 'password123', $url, requestId: $rid)],
            [self::echoed(['account' => self::ACCOUNT, 'credits_remaining' => 1]), fn () => $c->account(requestId: $rid)],
            [self::echoed(['api_key' => 'dsk_k', 'key_id' => 'key_k'], 201), fn () => $c->createKey('ci', requestId: $rid)],
            [self::echoed(['keys' => []]), fn () => $c->listKeys(requestId: $rid)],
            [self::echoed(['key' => ['id' => 'key_k']]), fn () => $c->revokeKey('key_k', requestId: $rid)],
            [$search, fn () => $c->search(query: 'Acme', type: 'company', requestId: $rid)],
            [$search, fn () => $c->search(name: 'J', requestId: $rid)],
            [$search, fn () => $c->searchPerson('J', requestId: $rid)],
            [$search, fn () => $c->searchCompany('Acme', requestId: $rid)],
            [$search, fn () => $c->verifyEmail('a@example.com', requestId: $rid)],
            [$search, fn () => $c->verifyPhone('+14155552671', requestId: $rid)],
            [$search, fn () => $c->getSearch('srch_1', requestId: $rid)],
            [self::echoed(['searches' => [], 'next_cursor' => null]), fn () => $c->listSearches(requestId: $rid)],
            [self::echoed(['searches' => [], 'next_cursor' => null]), fn () => iterator_to_array($c->eachSearch(requestId: $rid))],
            [$batch, fn () => $c->batch([['kind' => 'phone', 'input' => ['phone' => '+1']]], requestId: $rid)],
            [$batch, fn () => $c->getBatch('bat_1', requestId: $rid)],
            [self::echoed(['webhook' => ['id' => 'wh_1'], 'secret' => 'whsec_x'], 201), fn () => $c->createWebhook('https://example.com/h', requestId: $rid)],
            [self::echoed(['webhooks' => []]), fn () => $c->listWebhooks(requestId: $rid)],
            [self::echoed(['webhook' => ['id' => 'wh_1']]), fn () => $c->deleteWebhook('wh_1', requestId: $rid)],
            [self::echoed(['deliveries' => []]), fn () => $c->webhookDeliveries('wh_1', requestId: $rid)],
        ];
        $this->server->script(array_column($calls, 0));

        foreach ($calls as [, $call]) {
            $result = $call();
            if ($result instanceof \Dossier\Response) {
                $this->assertSame($rid, $result->requestId);
            }
        }

        $requests = $this->server->requests();
        $this->assertCount(count($calls), $requests);
        foreach ($requests as $r) {
            $this->assertSame($rid, $r['headers']['x-request-id'] ?? null, $r['method'] . ' ' . $r['path']);
        }
    }

    public function testWithoutOneNoneIsSent(): void
    {
        $this->server->script([self::echoed(['account' => self::ACCOUNT, 'credits_remaining' => 1])]);

        $this->client()->account();

        $this->assertArrayNotHasKey('x-request-id', $this->server->requests()[0]['headers']);
    }

    public function testTheSameIdGoesWithEveryRetryAndEveryPollOfTheCall(): void
    {
        $this->server->script([
            self::error(503, 'unavailable', 'try again', ['Retry-After' => '0']),
            self::pending('srch_p', '0'),
            ['status' => 200] + self::pending('srch_p', '0'),
            self::success(searchId: 'srch_p'),
        ]);

        $this->client()->verifyPhone('+14155552671', requestId: 'trace-7');

        $this->assertSame(['trace-7', 'trace-7', 'trace-7', 'trace-7'], array_map(
            static fn (array $r): ?string => $r['headers']['x-request-id'] ?? null,
            $this->server->requests(),
        ));
    }

    public function testAnIdTheGatewayWouldNotEchoIsRefusedBeforeAnythingIsSent(): void
    {
        $c = $this->client();
        foreach (['', str_repeat('a', 129), 'has space', "line\r\nX-Injected: 1", 'café'] as $rid) {
            foreach ([fn () => $c->account(requestId: $rid), fn () => $c->verifyPhone('+14155552671', requestId: $rid)] as $call) {
                try {
                    $call();
                    $this->fail('expected InvalidArgumentException for ' . json_encode($rid));
                } catch (InvalidArgumentException $e) {
                    $this->assertStringContainsString('requestId', $e->getMessage());
                }
            }
        }
        $this->assertSame([], $this->server->requests());

        $longest = substr(str_repeat('AZaz09._~:@+=/-', 9), 0, 128);
        $this->server->script([self::echoed(['account' => self::ACCOUNT, 'credits_remaining' => 1])]);
        $c->account(requestId: $longest);
        $this->assertSame($longest, $this->server->requests()[0]['headers']['x-request-id']);
    }
}
