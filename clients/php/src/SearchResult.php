<?php

declare(strict_types=1);

namespace Dossier;

use Dossier\Internal\Headers;

/**
 * The answer of a lookup or of getSearch(): the success envelope, or a pending search.
 *
 *   $result->status            "success" or "pending"
 *   $result->searchId          "srch_…"
 *   $result->results           list of result items (associative arrays, snake_case keys as in the API)
 *   $result->creditsRemaining  the balance after this call's charge
 *   $result->sources           [['provider' => …, 'outcome' => …, 'took_ms' => …], …] (empty while pending)
 *   $result->totalResults      a person search: how many items passed min_score before limit cut them (null for
 *                              other kinds, while pending, and for a person search settled before the server counted)
 *   $result->creditsSpent      the X-Credits-Spent header (0 on an idempotent replay), null if absent
 *   $result->replayed          true when the server answered an Idempotency-Key replay
 *   $result->idempotencyKey    the Idempotency-Key the lookup was sent with (null for getSearch())
 *
 * Array access and the raw body work as on every Response: $result['credits_remaining'], $result->rawBody. Other
 * envelope fields are read that way: $result['source_summary'] (how many sources had each outcome), and while
 * pending $result['progress'] (the results found so far,
 * source_summary, sources_pending, updated_at) when the search reports it.
 */
class SearchResult extends Response
{
    public readonly string $status;
    public readonly ?string $searchId;
    /** @var list<array<string, mixed>> */
    public readonly array $results;
    public readonly ?int $creditsRemaining;
    /** @var list<array<string, mixed>> */
    public readonly array $sources;
    /** A person search: how many items passed min_score before limit cut them; null when the envelope has none. */
    public readonly ?int $totalResults;
    public readonly ?int $creditsSpent;
    public readonly bool $replayed;
    /** The Idempotency-Key the lookup was sent with (yours, or the UUID v4 generated for it), kept through polling; null for getSearch(). */
    public readonly ?string $idempotencyKey;

    /**
     * @param array<string, string> $headers names lower-cased
     * @param array<string, mixed> $data
     */
    public function __construct(int $httpStatus, array $headers, array $data, string $rawBody, ?string $idempotencyKey = null)
    {
        parent::__construct($httpStatus, $headers, $data, $rawBody);
        $this->idempotencyKey = $idempotencyKey;
        $this->status = is_string($data['status'] ?? null) ? $data['status'] : ($httpStatus === 202 ? 'pending' : 'success');
        $this->searchId = is_string($data['search_id'] ?? null) ? $data['search_id'] : null;
        $this->results = is_array($data['results'] ?? null) ? array_values($data['results']) : [];
        $this->creditsRemaining = is_int($data['credits_remaining'] ?? null) ? $data['credits_remaining'] : null;
        $this->sources = is_array($data['sources'] ?? null) ? array_values($data['sources']) : [];
        $this->totalResults = is_int($data['total_results'] ?? null) ? $data['total_results'] : null;
        $this->creditsSpent = Headers::count($headers, 'x-credits-spent');
        $this->replayed = strtolower((string) $this->header('idempotent-replayed')) === 'true';
    }

    public function isPending(): bool
    {
        return $this->status === 'pending';
    }

    public function isSuccess(): bool
    {
        return $this->status === 'success';
    }
}
