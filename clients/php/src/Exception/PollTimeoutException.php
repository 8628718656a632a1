<?php

declare(strict_types=1);

namespace Dossier\Exception;

use Dossier\BatchResult;
use Dossier\SearchResult;

/**
 * A lookup (or a batch) was still pending when the client's poll deadline (pollTimeout) passed.
 * The work goes on at the server: fetch it later with Client::getSearch($e->getSearchId())
 * (or Client::getBatch($e->getBatchId())).
 * SearchTimeoutException is its deprecated name: an alias of this class, so either catches it.
 */
class PollTimeoutException extends \RuntimeException implements DossierException
{
    public function __construct(private readonly SearchResult|BatchResult $pending, float $waitedSeconds)
    {
        parent::__construct(sprintf(
            '%s was still pending after %.1f s; fetch it later with %s',
            $pending instanceof BatchResult ? 'batch ' . $pending->batchId : 'search ' . $pending->searchId,
            $waitedSeconds,
            $pending instanceof BatchResult ? 'getBatch()' : 'getSearch()',
        ));
    }

    /** The pending search's id; null for a batch. */
    public function getSearchId(): ?string
    {
        return $this->pending instanceof SearchResult ? $this->pending->searchId : null;
    }

    /** The pending batch's id; null for a single lookup. */
    public function getBatchId(): ?string
    {
        return $this->pending instanceof BatchResult ? $this->pending->batchId : null;
    }

    /** The last pending answer seen: a SearchResult, or a BatchResult for batch()/getBatch(). */
    public function getPendingResult(): SearchResult|BatchResult
    {
        return $this->pending;
    }
}

// The deprecated name, declared with the class so a `catch (SearchTimeoutException $e)` matches it (PHP does not
// autoload a class named only in a catch).
class_alias(PollTimeoutException::class, SearchTimeoutException::class);
