<?php

declare(strict_types=1);

namespace Dossier\Internal;

/**
 * @internal JSON helpers; not part of the public API
 */
final class Json
{
    /**
     * $text decoded as an associative array when it is a JSON object, else null (not JSON, or another
     * JSON value). Decoded as objects first: an associative array cannot tell {} and {"0": 1} from [] and [1].
     *
     * @return array<string, mixed>|null
     */
    public static function object(string $text): ?array
    {
        if (!json_decode($text) instanceof \stdClass) {
            return null;
        }
        /** @var array<string, mixed> $object */
        $object = json_decode($text, true);

        return $object;
    }
}
