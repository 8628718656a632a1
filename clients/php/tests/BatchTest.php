<?php

declare(strict_types=1);

namespace Dossier\Tests;

use Dossier\BatchResult;
use Dossier\Exception\InsufficientCreditsException;
use Dossier\Exception\InvalidArgumentException;
use Dossier\Exception\NotFoundException;
use Dossier\Exception\SearchTimeoutException;
use Dossier\Exception\UnavailableException;
use Dossier\Exception\ValidationException;

final class BatchTest extends TestCase
{
    private const ITEM_OK = [
        'status' => 'success', 'search_id' => 'srch_a', 'results' => [['e164' => '+14155552671']], 'credits_remaining' => 8,
        'sources' => [['provider' => 'libphonenumber', 'outcome' => 'found', 'took_ms' => 1]],
    ];
    private const ITEM_INVALID = [
        'status' => 'error',
        'error' => ['code' => 'validation_error', 'message' => 'invalid input', 'details' => [['field' => 'phone', 'issue' => 'is not a phone number']]],
    ];
    private const ITEM_BROKE = ['status' => 'error', 'error' => ['code' => 'insufficient_credits', 'message' => 'not enough credits']];
    private const ITEM_FAILED = ['status' => 'error', 'error' => ['code' => 'unavailable', 'message' => 'lookup failed'], 'search_id' => 'srch_f'];
    private const ITEM_PENDING = ['status' => 'pending', 'search_id' => 'srch_b', 'credits_remaining' => 8];
    private const REQUESTS = [
        ['kind' => 'phone', 'input' => ['phone' => '+14155552671']],
        ['kind' => 'phone', 'input' => ['phone' => 'abc', 'country' => null]],
    ];

    private static function batchBody(string $status, string $id, array $items): array
    {
        return ['status' => $status, 'batch_id' => $id, 'credits_remaining' => 8, 'items' => $items];
    }

    public function testBatchPostsTheRequestsAndModelsEachItem(): void
    {
        $this->server->script([['body' => self::batchBody('success', 'bat_1', [self::ITEM_OK, self::ITEM_INVALID, self::ITEM_BROKE, self::ITEM_FAILED])]]);

        $batch = $this->client()->batch(self::REQUESTS);

        $request = $this->server->requests()[0];
        $this->assertSame(['POST', '/v1/batch'], [$request['method'], $request['path']]);
        $this->assertSame(['requests' => [
            ['kind' => 'phone', 'input' => ['phone' => '+14155552671']],
            ['kind' => 'phone', 'input' => ['phone' => 'abc']],
        ]], $request['json']);
        $this->assertMatchesRegularExpression('/^[0-9a-f-]{36}$/', $request['headers']['idempotency-key']);

        $this->assertInstanceOf(BatchResult::class, $batch);
        $this->assertTrue($batch->isSuccess());
        $this->assertSame('bat_1', $batch->batchId);
        $this->assertSame(8, $batch->creditsRemaining);
        [$ok, $invalid, $broke, $failed] = $batch->items;
        $this->assertTrue($ok->isSuccess());
        $this->assertSame('srch_a', $ok->searchId);
        $this->assertSame('+14155552671', $ok->results[0]['e164']);
        $this->assertNull($ok->error);

        $this->assertTrue($invalid->isError());
        $this->assertFalse($invalid->isSuccess());
        $this->assertInstanceOf(ValidationException::class, $invalid->error);
        $this->assertSame('validation_error', $invalid->error->getErrorCode());
        $this->assertSame('phone', $invalid->error->getDetails()[0]['field']);
        $this->assertSame(0, $invalid->error->getHttpStatus());
        $this->assertNull($invalid->searchId);
        $this->assertSame([], $invalid->results);

        $this->assertInstanceOf(InsufficientCreditsException::class, $broke->error);
        $this->assertSame('not enough credits', $broke->error->getMessage());
        $this->assertInstanceOf(UnavailableException::class, $failed->error);
        $this->assertSame('srch_f', $failed->searchId);
        $this->assertSame('srch_f', $failed->error->getSearchId());
    }

    public function testItemsShareTheOtherClientsModelOkPendingFailedAndError(): void
    {
        $this->server->script([['body' => self::batchBody('success', 'bat_1', [self::ITEM_OK, self::ITEM_PENDING, self::ITEM_INVALID, self::ITEM_FAILED])]]);

        $batch = $this->client()->batch(self::REQUESTS);

        $this->assertSame(
            [[true, false, false], [false, true, false], [false, false, true], [false, false, true]],
            array_map(static fn ($i) => [$i->ok, $i->pending, $i->failed], $batch->items),
        );
        $this->assertSame(
            [null, null, ValidationException::class, UnavailableException::class],
            array_map(static fn ($i) => $i->error === null ? null : $i->error::class, $batch->items),
        );
        $this->assertSame([$batch->items[2], $batch->items[3]], $batch->errors());
    }

    public function testIdempotencyKeyAndRespondAsync(): void
    {
        $this->server->script([[
            'status' => 202, 'headers' => ['Location' => '/v1/batches/bat_2'],
            'body' => self::batchBody('pending', 'bat_2', [self::ITEM_OK, self::ITEM_PENDING]),
        ]]);

        $batch = $this->client()->batch(self::REQUESTS, idempotencyKey: 'batch-key-1', wait: false);

        $requests = $this->server->requests();
        $this->assertCount(1, $requests, 'wait: false does not poll');
        $this->assertSame('batch-key-1', $requests[0]['headers']['idempotency-key']);
        $this->assertSame('batch-key-1', $batch->idempotencyKey);
        $this->assertSame('respond-async', $requests[0]['headers']['prefer']);
        $this->assertTrue($batch->isPending());
        $this->assertSame('/v1/batches/bat_2', $batch->header('location'));
        $this->assertTrue($batch->items[1]->isPending());
        $this->assertSame('srch_b', $batch->items[1]->searchId);
    }

    public function testAPendingBatchIsPolledUntilSettled(): void
    {
        $pending = ['status' => 202, 'headers' => ['Retry-After' => '0.01'], 'body' => self::batchBody('pending', 'bat_3', [self::ITEM_PENDING])];
        $this->server->script([$pending, $pending, ['body' => self::batchBody('success', 'bat_3', [self::ITEM_OK])]]);

        $batch = $this->client()->batch([self::REQUESTS[0]]);

        $this->assertTrue($batch->isSuccess());
        $this->assertTrue($batch->items[0]->isSuccess());
        $this->assertSame(
            [['POST', '/v1/batch'], ['GET', '/v1/batches/bat_3'], ['GET', '/v1/batches/bat_3']],
            array_map(static fn (array $r): array => [$r['method'], $r['path']], $this->server->requests()),
        );
        $this->assertSame($this->server->requests()[0]['headers']['idempotency-key'], $batch->idempotencyKey, 'kept through polling');
    }

    public function testThePollTimeoutNamesTheBatch(): void
    {
        $this->server->script([], ['status' => 202, 'headers' => ['Retry-After' => '0.01'], 'body' => self::batchBody('pending', 'bat_4', [self::ITEM_PENDING])]);

        try {
            $this->client(['pollTimeout' => 0.05])->batch([self::REQUESTS[0]]);
            self::fail('expected a SearchTimeoutException');
        } catch (SearchTimeoutException $e) {
            $this->assertSame('bat_4', $e->getBatchId());
            $this->assertNull($e->getSearchId());
            $this->assertInstanceOf(BatchResult::class, $e->getPendingResult());
            $this->assertStringContainsString('bat_4', $e->getMessage());
        }
    }

    public function testGetBatch(): void
    {
        $this->server->script([['body' => self::batchBody('success', 'bat_5', [self::ITEM_OK])], self::error(404, 'not_found', 'no such batch')]);
        $client = $this->client();

        $got = $client->getBatch('bat_5');
        $this->assertSame('srch_a', $got->items[0]->searchId);
        $this->assertNull($got->idempotencyKey, 'a GET sends no Idempotency-Key');
        try {
            $client->getBatch('bat/other');
            self::fail('expected a NotFoundException');
        } catch (NotFoundException $e) {
            $this->assertSame('not_found', $e->getErrorCode());
        }
        $this->assertSame(['/v1/batches/bat_5', '/v1/batches/bat%2Fother'], array_column($this->server->requests(), 'path'));
    }

    public function testMoreThan100RequestsIsTheServers400(): void
    {
        $this->server->script([self::error(400, 'validation_error', 'must contain at most 100 requests', details: [['field' => 'requests', 'issue' => 'must contain at most 100 requests']])]);

        try {
            $this->client()->batch(array_fill(0, 101, self::REQUESTS[0]));
            self::fail('expected a ValidationException');
        } catch (ValidationException $e) {
            $this->assertSame(400, $e->getHttpStatus());
            $this->assertSame('requests', $e->getDetails()[0]['field']);
        }
        $this->assertCount(101, $this->server->requests()[0]['json']['requests']);
    }

    public function testAnEmptyInputIsSentAsAJsonObject(): void
    {
        // PHP's [] is both an empty list and an empty map: an input is a JSON object, so {} (the gateway then names
        // the missing field), whether it was given empty or became so once its null fields were dropped.
        $this->server->script([['body' => self::batchBody('success', 'bat_1', [self::ITEM_INVALID, self::ITEM_INVALID])]]);

        $this->client()->batch([['kind' => 'phone', 'input' => []], ['kind' => 'email', 'input' => ['email' => null]]]);

        $this->assertSame(
            '{"requests":[{"kind":"phone","input":{}},{"kind":"email","input":{}}]}',
            $this->server->requests()[0]['body'],
        );
    }

    public function testAnInputThatIsNotUtf8IsTheClientsOwnExceptionBeforeAnythingIsSent(): void
    {
        foreach ([
            fn () => $this->client()->batch([['kind' => 'person', 'input' => ['name' => "Jos\xE9"]]]),
            fn () => $this->client()->searchPerson(name: "Jos\xE9"),
        ] as $call) {
            try {
                $call();
                $this->fail('expected InvalidArgumentException');
            } catch (InvalidArgumentException $e) {
                $this->assertStringContainsString('UTF-8', $e->getMessage());
                $this->assertInstanceOf(\Dossier\Exception\DossierException::class, $e);
            }
        }
        $this->assertSame([], $this->server->requests());
    }

    public function testANonFiniteNumberIsTheClientsOwnExceptionNamingIt(): void
    {
        // As Ruby's ArgumentError, Python's ValueError and JavaScript's TypeError: the message names what is wrong
        // (a number), not UTF-8.
        foreach ([NAN, INF, -INF] as $number) {
            try {
                $this->client()->batch([['kind' => 'phone', 'input' => ['phone' => '+14155552671', 'country' => $number]]]);
                $this->fail('expected InvalidArgumentException');
            } catch (InvalidArgumentException $e) {
                $this->assertStringContainsString('every number must be finite (no INF or NAN)', $e->getMessage());
                $this->assertStringNotContainsString('UTF-8', $e->getMessage());
            }
        }
        $this->assertSame([], $this->server->requests());
    }

    public function testEachRequestMustBeAnArray(): void
    {
        $this->expectException(InvalidArgumentException::class);
        try {
            $this->client()->batch(['phone']);
        } finally {
            $this->assertSame([], $this->server->requests());
        }
    }
}
