<?php

declare(strict_types=1);

namespace Dossier\Tests;

use Dossier\Exception\InsufficientCreditsException;
use Dossier\SearchResult;

/** X-Credits-Spent and X-Credits-Remaining, read the same way by the four clients. */
final class CreditHeadersTest extends \PHPUnit\Framework\TestCase
{
    /**
     * The same table is in the Python, JavaScript and Ruby clients' tests: header value, count or null.
     *
     * @return array<string, array{string, int|null}>
     */
    public static function counts(): array
    {
        $named = [];
        foreach ([['7', 7], ['0', 0], [' 7 ', 7], ['-1', null], ['+7', null], ['1.5', null], ['1e2', null], ['0x10', null], ['1_000', null], ['٣', null], ['', null], [' ', null], ['seven', null]] as [$value, $count]) {
            $named[var_export($value, true)] = [$value, $count];
        }

        return $named;
    }

    /** @dataProvider counts */
    public function testCreditsSpentAndRemainingAreWholeNumbersOrNull(string $value, ?int $count): void
    {
        $result = new SearchResult(200, ['x-credits-spent' => $value], ['status' => 'success', 'search_id' => 'srch_1'], '{}');
        $this->assertSame($count, $result->creditsSpent);
        $error = new InsufficientCreditsException('no credits', 402, 'insufficient_credits', null, [], null, '', ['x-credits-remaining' => $value]);
        $this->assertSame($count, $error->getCreditsRemaining());
    }
}
