<?php

declare(strict_types=1);

namespace Dossier\Exception;

/**
 * 402 insufficient_credits: the balance is below the lookup's cost; nothing was charged.
 */
class InsufficientCreditsException extends ApiException
{
    /** The balance (the X-Credits-Remaining header); null when the answer has none (a batch item's error). */
    public function getCreditsRemaining(): ?int
    {
        $value = trim((string) $this->getHeader('X-Credits-Remaining'));

        return preg_match('/^\d+$/D', $value) ? (int) $value : null;
    }
}
