<?php

declare(strict_types=1);

namespace Dossier\Tests;

/** The person search's country, limit and minScore (ADRs 0044, 0047) and the envelope's total_results. */
final class PersonLimitTest extends TestCase
{
    public function testSearchPersonSendsCountryLimitAndMinScoreAsGiven(): void
    {
        $counted = self::success();
        $counted['body']['total_results'] = 42;
        $this->server->script([$counted, self::success(), self::success()]);
        $client = $this->client();

        $found = $client->searchPerson('Gonzalo Halvorson', phone: '(512) 555-0199', country: 'US', limit: 10, minScore: 0.5);
        $later = $client->searchPerson(name: 'Gonzalo Halvorson', limit: 1, permissiblePurpose: 'employment');
        // Positional calls written before these arguments existed still mean what they meant.
        $client->searchPerson('Ada', null, null, null, 'London', null, 'employment');

        $this->assertSame([
            ['/v1/search/person', '{"name":"Gonzalo Halvorson","phone":"(512) 555-0199","country":"US","limit":10,"min_score":0.5}'],
            ['/v1/search/person', '{"name":"Gonzalo Halvorson","limit":1,"permissible_purpose":"employment"}'],
            ['/v1/search/person', '{"name":"Ada","location":"London","permissible_purpose":"employment"}'],
        ], array_map(static fn (array $r): array => [$r['path'], $r['body']], $this->server->requests()));
        $this->assertSame(42, $found->totalResults);
        $this->assertSame(42, $found['total_results']);
        $this->assertNull($later->totalResults);
    }
}
