<?php

declare(strict_types=1);

namespace Dossier;

use Dossier\Internal\Headers;
use Dossier\Internal\Redact;

/**
 * A successful answer of the Dossier API.
 *
 * The decoded JSON body is available three ways:
 *   $response['api_key']   (array access, the API's snake_case names)
 *   $response->apiKey      (camelCase property access for the body's top-level fields)
 *   $response->data        (the whole body as an array)
 *
 * @implements \ArrayAccess<string, mixed>
 */
class Response implements \ArrayAccess, \JsonSerializable
{
    /** The X-Request-Id header. */
    public readonly ?string $requestId;

    /**
     * @param int $httpStatus e.g. 200, 201, 202
     * @param array<string, string> $headers response headers, names lower-cased
     * @param array<string, mixed> $data the decoded JSON body
     * @param string $rawBody the body exactly as received
     */
    public function __construct(
        public readonly int $httpStatus,
        public readonly array $headers,
        public readonly array $data,
        public readonly string $rawBody,
    ) {
        $this->requestId = Headers::get($headers, 'x-request-id');
    }

    /** A response header by case-insensitive name. */
    public function header(string $name): ?string
    {
        return Headers::get($this->headers, $name);
    }

    /**
     * The calling key's rate limit as this answer reports it: 'limit' (RateLimit-Limit, requests allowed in a
     * burst), 'remaining' (RateLimit-Remaining, requests left in it) and 'reset' (RateLimit-Reset, seconds until
     * it is full again). Each is a whole number, or null when the header is absent or not one (read as the
     * credit headers are). As rate_limit in the other three clients.
     *
     * @return array{limit: ?int, remaining: ?int, reset: ?int}
     */
    public function rateLimit(): array
    {
        return [
            'limit' => Headers::count($this->headers, 'ratelimit-limit'),
            'remaining' => Headers::count($this->headers, 'ratelimit-remaining'),
            'reset' => Headers::count($this->headers, 'ratelimit-reset'),
        ];
    }

    /** @return array<string, mixed> the decoded JSON body */
    public function toArray(): array
    {
        return $this->data;
    }

    /** camelCase access to top-level body fields: $response->apiKey reads $response['api_key']. */
    public function __get(string $name): mixed
    {
        $key = self::snake($name);
        if (array_key_exists($key, $this->data)) {
            return $this->data[$key];
        }
        if (array_key_exists($name, $this->data)) {
            return $this->data[$name];
        }
        trigger_error(sprintf('Undefined property: %s::$%s', static::class, $name), E_USER_WARNING);

        return null;
    }

    public function __isset(string $name): bool
    {
        return isset($this->data[self::snake($name)]) || isset($this->data[$name]);
    }

    public function offsetExists(mixed $offset): bool
    {
        return isset($this->data[$offset]);
    }

    public function offsetGet(mixed $offset): mixed
    {
        return $this->data[$offset] ?? null;
    }

    public function offsetSet(mixed $offset, mixed $value): void
    {
        throw new \LogicException('Dossier responses are read-only');
    }

    public function offsetUnset(mixed $offset): void
    {
        throw new \LogicException('Dossier responses are read-only');
    }

    /**
     * What var_dump() and print_r() show: every property, with an api_key shortened to dsk_live… and a
     * webhook secret to whsec_… in data and rawBody (the properties themselves keep the full values).
     *
     * @return array<string, mixed>
     */
    public function __debugInfo(): array
    {
        $shown = get_object_vars($this);
        $replace = [];
        foreach (['api_key' => Redact::apiKey(...), 'secret' => Redact::secret(...)] as $field => $redact) {
            $value = $this->data[$field] ?? null;
            if (is_string($value) && $value !== '') {
                $shown['data'][$field] = $redact($value);
                $replace[$value] = $redact($value);
            }
        }
        $shown['rawBody'] = strtr($this->rawBody, $replace);

        return $shown;
    }

    /** @return array<string, mixed> */
    public function jsonSerialize(): array
    {
        return $this->data;
    }

    private static function snake(string $name): string
    {
        return strtolower((string) preg_replace('/(?<!^)[A-Z]/', '_$0', $name));
    }
}
