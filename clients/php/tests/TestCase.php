<?php

declare(strict_types=1);

namespace Dossier\Tests;

use Dossier\Client;

/** Base for unit tests: a fresh script on the shared fake server before every test. */
abstract class TestCase extends \PHPUnit\Framework\TestCase
{
    /** An account as the gateway describes it (API.md). */
    protected const ACCOUNT = ['id' => 'acct_1', 'email' => 'a@example.com', 'created_at' => '2026-11-24T00:00:00.000Z'];

    protected FakeServer $server;

    protected function setUp(): void
    {
        $this->server = FakeServer::get();
        $this->server->script([]);
    }

    /** A client with fast retries and polls so tests stay quick. */
    protected function client(array $options = []): Client
    {
        return new Client(...($options + [
            'apiKey' => 'dsk_test_key',
            'baseUrl' => $this->server->baseUrl,
            'timeout' => 5.0,
            'maxRetries' => 2,
            'pollTimeout' => 5.0,
            'pollInterval' => 0.01,
            'retryBaseDelay' => 0.01,
            'retryMaxDelay' => 0.02,
        ]));
    }

    /** The body of GET /v1/account. */
    protected static function accountBody(int $credits = 1): array
    {
        return ['status' => 'success', 'account' => self::ACCOUNT, 'credits_remaining' => $credits];
    }

    /** The success envelope of a lookup. */
    protected static function success(array $results = [], int $credits = 99, string $searchId = 'srch_1', array $headers = []): array
    {
        return [
            'status' => 200,
            'headers' => $headers + ['X-Credits-Spent' => '1', 'X-Credits-Remaining' => (string) $credits],
            'body' => [
                'status' => 'success',
                'search_id' => $searchId,
                'results' => $results,
                'credits_remaining' => $credits,
                'sources' => [['provider' => 'libphonenumber', 'outcome' => 'found', 'took_ms' => 1]],
            ],
        ];
    }

    /** A 202 pending answer. */
    protected static function pending(string $searchId = 'srch_1', ?string $retryAfter = '0.01', int $credits = 99): array
    {
        $headers = ['Location' => '/v1/searches/' . $searchId];
        if ($retryAfter !== null) {
            $headers['Retry-After'] = $retryAfter;
        }

        return [
            'status' => 202,
            'headers' => $headers,
            'body' => ['status' => 'pending', 'search_id' => $searchId, 'credits_remaining' => $credits],
        ];
    }

    /** An error envelope answer. */
    protected static function error(int $status, string $code, string $message = 'boom', array $headers = [], ?array $details = null, string $requestId = 'req_123'): array
    {
        $error = ['code' => $code, 'message' => $message];
        if ($details !== null) {
            $error['details'] = $details;
        }

        return [
            'status' => $status,
            'headers' => $headers,
            'body' => ['status' => 'error', 'error' => $error, 'request_id' => $requestId],
        ];
    }
}
