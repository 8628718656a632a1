<?php

declare(strict_types=1);

namespace Dossier\Exception;

use Dossier\SearchResult;

/**
 * A lookup was still pending when the client's poll deadline (pollTimeout) passed.
 * The search goes on at the server: fetch it later with Client::getSearch($e->getSearchId()).
 */
class SearchTimeoutException extends \RuntimeException implements DossierException
{
    public function __construct(private readonly SearchResult $pending, float $waitedSeconds)
    {
        parent::__construct(sprintf(
            'search %s was still pending after %.1f s; fetch it later with getSearch()',
            (string) $pending->searchId,
            $waitedSeconds,
        ));
    }

    public function getSearchId(): ?string
    {
        return $this->pending->searchId;
    }

    /** The last pending answer seen (status "pending", search_id, credits_remaining). */
    public function getPendingResult(): SearchResult
    {
        return $this->pending;
    }
}
