<?php

declare(strict_types=1);

namespace Dossier\Tests;

use Dossier\Exception\ValidationException;

/** Search history: GET /v1/searches, its filters and its cursor pages. */
final class HistoryTest extends TestCase
{
    /** @return array<string, mixed> */
    private static function summary(string $id): array
    {
        return [
            'search_id' => $id, 'kind' => 'phone', 'status' => 'succeeded', 'created_at' => '2026-11-22T09:31:12.418Z',
            'completed_at' => '2026-11-22T09:31:12.502Z', 'credits_spent' => 1, 'permissible_purpose' => null, 'result_count' => 1,
        ];
    }

    /** @param list<array<string, mixed>> $searches */
    private static function page(array $searches, ?string $next): array
    {
        return ['status' => 200, 'body' => ['status' => 'success', 'searches' => $searches, 'next_cursor' => $next]];
    }

    public function testListSearchesSendsTheFiltersAndReturnsThePage(): void
    {
        $this->server->script([self::page([self::summary('srch_2'), self::summary('srch_1')], 'c+/2'), self::page([], null)]);

        $page = $this->client()->listSearches(kind: 'phone', since: '2026-11-01T00:00:00Z', until: '2026-12-01T00:00:00Z', limit: 2);
        $this->assertSame(['srch_2', 'srch_1'], array_column($page->searches, 'search_id'));
        $this->assertSame('c+/2', $page->nextCursor);
        $last = $this->client()->listSearches();
        $this->assertSame([[], null], [$last->searches, $last->nextCursor]);

        [$first, $second] = $this->server->requests();
        $this->assertSame(['GET', '/v1/searches'], [$first['method'], $first['path']]);
        $this->assertSame('kind=phone&since=2026-11-01T00%3A00%3A00Z&until=2026-12-01T00%3A00%3A00Z&limit=2', $first['query']);
        $this->assertSame('Bearer dsk_test_key', $first['headers']['authorization']);
        $this->assertNull($second['query']);
    }

    public function testDateTimeFiltersAreSentAsRfc3339InUtc(): void
    {
        // A DateTimeInterface was refused (strict types) or, through a string cast, not an RFC 3339 date-time.
        $this->server->script([self::page([], null), self::page([], null), self::page([], null)]);

        $client = $this->client();
        $client->listSearches(
            since: new \DateTimeImmutable('2026-11-24 15:00:00', new \DateTimeZone('+01:00')),
            until: new \DateTime('2026-11-25 08:30:00.25', new \DateTimeZone('UTC')),
        );
        $client->listSearches(since: new \DateTimeImmutable('2026-11-24T14:00:00.123456Z'));
        $client->listSearches(since: '2026-11-24T14:00:00+01:00'); // a string is sent as given

        $this->assertSame([
            'since=2026-11-24T14%3A00%3A00Z&until=2026-11-25T08%3A30%3A00.25Z',
            'since=2026-11-24T14%3A00%3A00.123456Z',
            'since=2026-11-24T14%3A00%3A00%2B01%3A00',
        ], array_column($this->server->requests(), 'query'));
    }

    public function testEachSearchFollowsNextCursorWithTheSameFilters(): void
    {
        $this->server->script([self::page([self::summary('srch_3'), self::summary('srch_2')], 'c+/2'), self::page([self::summary('srch_1')], null)]);

        $ids = [];
        foreach ($this->client()->eachSearch(kind: 'phone', limit: 2) as $search) {
            $ids[] = $search['search_id'];
        }
        $this->assertSame(['srch_3', 'srch_2', 'srch_1'], $ids);
        $this->assertSame(['kind=phone&limit=2', 'kind=phone&limit=2&cursor=c%2B%2F2'], array_column($this->server->requests(), 'query'));
    }

    public function testABadFilterIsAValidationException(): void
    {
        $this->server->script([self::error(400, 'validation_error', 'limit must be a whole number from 1 to 100', [], [['field' => 'limit', 'issue' => 'must be a whole number from 1 to 100']])]);

        try {
            $this->client()->listSearches(limit: 0);
            $this->fail('expected ValidationException');
        } catch (ValidationException $e) {
            $this->assertSame('limit', $e->getDetails()[0]['field']);
        }
    }
}
