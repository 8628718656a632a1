<?php

declare(strict_types=1);

namespace Dossier\Tests;

use Dossier\Client;
use Dossier\Internal\HttpTransport;

/**
 * Stands in for a client's sleeps and clock (no test measures the wall clock): a sleep returns at once, recorded in
 * $sleeps, and moves $now on by what it was asked for; the time the requests take does not move it, so a deadline is
 * reached by the sleeps alone.
 */
final class FakeClock
{
    /** @var list<float> */
    public array $sleeps = [];

    public float $now = 1000.0;

    public static function in(Client $client): self
    {
        $clock = new self();
        $http = (fn (): HttpTransport => $this->http)->call($client);
        $http->sleeper = function (float $seconds) use ($clock): void {
            $clock->sleeps[] = $seconds;
            $clock->now += $seconds;
        };
        $http->clock = static fn (): float => $clock->now;

        return $clock;
    }
}
