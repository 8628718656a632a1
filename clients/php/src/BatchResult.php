<?php

declare(strict_types=1);

namespace Dossier;

/**
 * The answer of Client::batch() and Client::getBatch().
 *
 *   $batch->status            "success" (every item settled) or "pending" (202: some item still runs)
 *   $batch->batchId           "bat_…"
 *   $batch->items             list of BatchItem, one per request, in request order
 *   $batch->errors()          the items in error
 *   $batch->creditsRemaining  the balance after every item's charge
 *   $batch->idempotencyKey    the Idempotency-Key the batch was sent with (null for getBatch())
 *
 * Array access and the raw body work as on every Response: $batch['batch_id'], $batch->rawBody.
 */
class BatchResult extends Response
{
    public readonly string $status;
    public readonly ?string $batchId;
    /** @var list<BatchItem> */
    public readonly array $items;
    public readonly ?int $creditsRemaining;
    /** The Idempotency-Key the batch was sent with (yours, or the UUID v4 generated for it), kept through polling; null for getBatch(). */
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
        $this->batchId = is_string($data['batch_id'] ?? null) ? $data['batch_id'] : null;
        $items = [];
        foreach (is_array($data['items'] ?? null) ? $data['items'] : [] as $item) {
            $items[] = new BatchItem(is_array($item) ? $item : []);
        }
        $this->items = $items;
        $this->creditsRemaining = is_int($data['credits_remaining'] ?? null) ? $data['credits_remaining'] : null;
    }

    /**
     * The items in error ($item->failed).
     *
     * @return list<BatchItem>
     */
    public function errors(): array
    {
        return array_values(array_filter($this->items, static fn (BatchItem $item): bool => $item->failed));
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
