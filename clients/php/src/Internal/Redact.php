<?php

declare(strict_types=1);

namespace Dossier\Internal;

/**
 * @internal secrets shortened for printing (var_dump, print_r), as the other clients print them; not part of the public API
 */
final class Redact
{
    /** "dsk_live_abc…" → "dsk_live…" */
    public static function apiKey(#[\SensitiveParameter] string $key): string
    {
        return substr($key, 0, 8) . '…';
    }

    /** "whsec_abc…" → "whsec_…" */
    public static function secret(#[\SensitiveParameter] string $secret): string
    {
        return substr($secret, 0, 6) . '…';
    }
}
