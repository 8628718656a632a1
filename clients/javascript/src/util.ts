/** Small helpers with no dependencies beyond the JavaScript runtime. */

/**
 * Exponential backoff with full jitter: a random delay in `[0, min(cap, base * 2^attempt)]`
 * (attempt 0 is the first retry).
 */
export function backoffDelayMs(
  attempt: number,
  baseMs: number,
  capMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt));
  return Math.floor(random() * ceiling);
}

/** A UUID v4 (RFC 9562), from `crypto.randomUUID()` when the runtime has it. */
export function uuidv4(): string {
  const c = (
    globalThis as { crypto?: { randomUUID?: () => string; getRandomValues?: <T extends Uint8Array>(a: T) => T } }
  ).crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  const bytes = new Uint8Array(16);
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(bytes);
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A copy of `params` without the keys whose value is `undefined` or `null`: absent fields are omitted. */
export function compact<T extends object>(params: T | null | undefined): Partial<T> {
  const out: Record<string, unknown> = {};
  if (!params) return out as Partial<T>;
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null) out[key] = value;
  }
  return out as Partial<T>;
}

/** `value` cut to its first `keep` characters and an ellipsis, so a secret can be printed: `dsk_live…`. */
export function shortened(value: string, keep: number): string {
  return `${value.slice(0, keep)}…`;
}

/** Node's `util.inspect.custom` (by its registered name: the library builds without Node's types). */
export const INSPECT = Symbol.for('nodejs.util.inspect.custom');

/**
 * `body` with a non-enumerable `util.inspect.custom` that prints its `api_key` as `dsk_live…` and
 * its `secret` as `whsec_…`, as the other clients print them. The fields themselves are untouched
 * (and `JSON.stringify` gives them whole): this only keeps them out of `console.log` and logs.
 */
export function hideSecretsWhenPrinted<T extends object>(body: T): T {
  if (!body || typeof body !== 'object') return body;
  const fields = body as { api_key?: unknown; secret?: unknown };
  if (typeof fields.api_key !== 'string' && typeof fields.secret !== 'string') return body;
  Object.defineProperty(body, INSPECT, {
    enumerable: false,
    value: () => {
      const shown: Record<string, unknown> = { ...(body as Record<string, unknown>) };
      if (typeof fields.api_key === 'string') shown['api_key'] = shortened(fields.api_key, 8);
      if (typeof fields.secret === 'string') shown['secret'] = shortened(fields.secret, 6);
      return shown;
    },
  });
  return body;
}

/** An environment variable, when the runtime has `process.env` (Node, Bun, Deno with compat). */
export function envVar(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return proc?.env?.[name];
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
