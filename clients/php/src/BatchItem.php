<?php

declare(strict_types=1);

namespace Dossier;

use Dossier\Exception\ApiException;

/**
 * One item of a batch, answering the request at its place: a lookup's answer or an item error, as in the
 * Python, JavaScript and Ruby clients.
 *
 *   $item->ok                true for a finished lookup (status "success"; isSuccess() is the same)
 *   $item->pending           true while its lookup still runs (status "pending"; isPending())
 *   $item->failed            true for an item in error (status "error"; isError() is the same): see error
 *   $item->status            "success", "pending" or "error"
 *   $item->searchId          "srch_…" (also on a failed lookup's error); null for an invalid item
 *   $item->results           the lookup's results (empty unless success)
 *   $item->sources           [['provider' => …, 'outcome' => …, 'took_ms' => …], …]
 *   $item->creditsRemaining  the balance the item's envelope carries, when it has one
 *   $item->totalResults      a person search: how many items passed min_score before limit cut them, else null
 *   $item->error             for an error item: the ApiException subclass its code maps to
 *                            (ValidationException, InsufficientCreditsException, …), not thrown; else null
 *   $item->data              the item as received
 */
final class BatchItem
{
    public readonly string $status;
    public readonly ?string $searchId;
    /** @var list<array<string, mixed>> */
    public readonly array $results;
    /** @var list<array<string, mixed>> */
    public readonly array $sources;
    public readonly ?int $creditsRemaining;
    public readonly ?int $totalResults;
    public readonly ?ApiException $error;
    public readonly bool $ok;
    public readonly bool $pending;
    public readonly bool $failed;

    /** @param array<string, mixed> $data */
    public function __construct(public readonly array $data)
    {
        $this->status = is_string($data['status'] ?? null) ? $data['status'] : 'error';
        $this->ok = $this->status === 'success';
        $this->pending = $this->status === 'pending';
        $this->failed = $this->status === 'error';
        $this->searchId = is_string($data['search_id'] ?? null) ? $data['search_id'] : null;
        $this->results = is_array($data['results'] ?? null) ? array_values($data['results']) : [];
        $this->sources = is_array($data['sources'] ?? null) ? array_values($data['sources']) : [];
        $this->creditsRemaining = is_int($data['credits_remaining'] ?? null) ? $data['credits_remaining'] : null;
        $this->totalResults = is_int($data['total_results'] ?? null) ? $data['total_results'] : null;
        $this->error = $this->failed ? ApiException::fromBatchItem($data) : null;
    }

    public function isSuccess(): bool
    {
        return $this->ok;
    }

    public function isPending(): bool
    {
        return $this->pending;
    }

    public function isError(): bool
    {
        return $this->failed;
    }
}
