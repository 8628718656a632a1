<?php

declare(strict_types=1);

namespace Dossier\Tests;

/** Username presence's choice of sites (sites, tags, top) and POST /v1/screen. */
final class UsernameAndScreenTest extends TestCase
{
    private const UUID4 = '/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/';

    private const HIT = [
        'list' => 'ofac-sdn',
        'entry_id' => '9001',
        'listed_name' => 'KARIMOV, Rustam Bakhtiyorovich',
        'programme' => 'SDGT',
        'match_score' => 0.95,
        'matched_on' => ['name', 'birth_year'],
    ];

    private const SUMMARY = [
        'found' => 1, 'not_found' => 3, 'unknown' => 0, 'rate_limited' => 0,
        'blocked' => 0, 'timeout' => 1, 'error' => 0, 'skipped' => 0,
    ];

    public function testSearchPersonAndSearchSendSitesTagsAndTopAsGiven(): void
    {
        $this->server->script(array_fill(0, 4, self::success()));
        $client = $this->client();

        $client->searchPerson(username: 'gracehopper', sites: ['GitHub', 'Reddit'], tags: ['coding', 'de'], top: 5);
        $client->searchPerson(username: 'gracehopper', top: 50, permissiblePurpose: 'employment');
        $client->search(username: 'gracehopper', tags: [3 => 'gaming']);
        $client->search(query: 'gracehopper', type: 'username', sites: ['GitHub'], top: 3);

        $this->assertSame([
            ['/v1/search/person', '{"username":"gracehopper","sites":["GitHub","Reddit"],"tags":["coding","de"],"top":5}'],
            ['/v1/search/person', '{"username":"gracehopper","top":50,"permissible_purpose":"employment"}'],
            ['/v1/search/person', '{"username":"gracehopper","tags":["gaming"]}'],
            ['/v1/search', '{"query":"gracehopper","type":"username","sites":["GitHub"],"top":3}'],
        ], array_map(static fn (array $r): array => [$r['path'], $r['body']], $this->server->requests()));
    }

    public function testAPendingSearchShowsItsProgressAndTheFinishedOneItsSourceSummary(): void
    {
        $progress = [
            'results' => [['id' => 'per_u', 'accounts' => [['service' => 'GitHub', 'username' => 'gh', 'url' => null]]]],
            'source_summary' => ['timeout' => 0] + self::SUMMARY,
            'sources_pending' => 1,
            'updated_at' => '2026-12-07T00:00:00.000Z',
        ];
        $pending = self::pending('srch_u');
        $pending['body']['progress'] = $progress;
        $done = self::success([], 9, 'srch_u');
        $done['body']['source_summary'] = self::SUMMARY;
        $this->server->script([$pending, $done]);
        $client = $this->client();

        $started = $client->searchPerson(username: 'gh', top: 5, wait: false);
        $this->assertTrue($started->isPending());
        $this->assertSame(1, $started['progress']['sources_pending']);
        $this->assertSame(self::SUMMARY, $client->getSearch('srch_u')['source_summary']);
    }

    public function testScreenPostsTheNameAndItsOptionsWithoutAbsentOnes(): void
    {
        $this->server->script(array_fill(0, 3, self::success()));
        $client = $this->client();

        $client->screen('Rustam Karimov');
        $client->screen('Rustam Karimov', birthYear: 1961, country: 'UZ', type: 'person', permissiblePurpose: 'kyc');
        $client->screen(name: 'Acme Ltd', type: 'company');

        $requests = $this->server->requests();
        $this->assertSame([
            ['/v1/screen', '{"name":"Rustam Karimov"}'],
            ['/v1/screen', '{"name":"Rustam Karimov","type":"person","birth_year":1961,"country":"UZ","permissible_purpose":"kyc"}'],
            ['/v1/screen', '{"name":"Acme Ltd","type":"company"}'],
        ], array_map(static fn (array $r): array => [$r['path'], $r['body']], $requests));
        foreach ($requests as $request) {
            $this->assertMatchesRegularExpression(self::UUID4, $request['headers']['idempotency-key']);
        }
    }

    public function testScreenIsRetriedWithItsKeyAndIts202PolledToTheEnvelope(): void
    {
        $item = ['id' => 'per_1', 'full_name' => 'KARIMOV, Rustam', 'match_score' => 0.9, 'watchlist_hits' => [self::HIT]];
        $this->server->script([
            self::error(503, 'unavailable', 'busy', ['Retry-After' => '0']),
            self::pending('srch_s', '0'),
            self::success([$item], 7, 'srch_s'),
        ]);

        $result = $this->client()->screen('Rustam Karimov', birthYear: 1961, idempotencyKey: 'screen-1');

        $this->assertTrue($result->isSuccess());
        $this->assertSame([self::HIT], $result->results[0]['watchlist_hits']);
        $this->assertSame('screen-1', $result->idempotencyKey);
        $requests = $this->server->requests();
        $this->assertSame(
            [['POST', '/v1/screen'], ['POST', '/v1/screen'], ['GET', '/v1/searches/srch_s']],
            array_map(static fn (array $r): array => [$r['method'], $r['path']], $requests),
        );
        $this->assertSame('screen-1', $requests[0]['headers']['idempotency-key']);
        $this->assertSame('screen-1', $requests[1]['headers']['idempotency-key']);
    }
}
