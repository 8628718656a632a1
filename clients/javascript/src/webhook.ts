import { DossierError, SignatureVerificationError } from './errors.js';
import type { WebhookEvent } from './types.js';

/** The header each delivery is signed in. */
export const SIGNATURE_HEADER = 'Dossier-Signature';

/** Options of {@link Webhook.verify} (a number in their place is the `tolerance`). */
export interface VerifyOptions {
  /** The largest accepted difference, in seconds, between the signature's `t` and now (default 300). */
  tolerance?: number | undefined;
  /** The current time in Unix seconds, for tests (default: the clock). */
  now?: number | undefined;
}

/** The part of WebCrypto's SubtleCrypto used here (typed locally: the library builds without DOM or Node types). */
interface HmacSubtle {
  importKey(
    format: 'raw',
    keyData: Uint8Array,
    algorithm: { name: 'HMAC'; hash: 'SHA-256' },
    extractable: false,
    usages: ['verify'],
  ): Promise<unknown>;
  verify(algorithm: 'HMAC', key: unknown, signature: Uint8Array, data: Uint8Array): Promise<boolean>;
}

/**
 * Checks that a webhook delivery came from your Dossier server.
 *
 * ```ts
 * const event = await Webhook.verify(rawBody, req.headers['dossier-signature'], process.env.WEBHOOK_SECRET!);
 * ```
 */
export class Webhook {
  /**
   * Verifies a delivery and returns its parsed event. `payload` is the raw request body exactly as
   * received (a string or bytes, not a re-serialized object); `header` the `Dossier-Signature` header
   * (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, the hex in either case); `secret` the
   * webhook's `whsec_…` secret. Any one of several `v1=` values may match; each is compared in constant
   * time (WebCrypto's HMAC verify).
   *
   * The fourth argument is the tolerance in seconds (`Webhook.verify(body, header, secret, 60)`, as
   * in the other clients) or `{ tolerance, now }`; anything else (or a tolerance that is not a
   * number ≥ 0) rejects with a `TypeError`.
   *
   * Rejects with `SignatureVerificationError` when the secret is empty or not a string, the header is
   * missing or malformed, no signature matches, `t` is more than `tolerance` seconds from now, or the
   * payload is not a JSON object.
   */
  static async verify(
    payload: string | Uint8Array,
    header: string | null | undefined,
    secret: string,
    options: number | VerifyOptions = {},
  ): Promise<WebhookEvent> {
    const { tolerance, now } = verifyOptions(options);
    // As in the other clients: an unset secret (an empty or missing environment variable) is refused,
    // rather than a DOMException from WebCrypto or a key made of the text "undefined".
    if (typeof secret !== 'string' || secret === '') throw new SignatureVerificationError('no webhook secret given');
    if (!header) throw new SignatureVerificationError(`no ${SIGNATURE_HEADER} header`);
    const { timestamp, signatures } = parseHeader(header);
    const encoder = new TextEncoder();
    const body = typeof payload === 'string' ? encoder.encode(payload) : payload;
    const prefix = encoder.encode(`${timestamp}.`);
    const signed = new Uint8Array(prefix.length + body.length);
    signed.set(prefix, 0);
    signed.set(body, prefix.length);

    const subtle = webCrypto();
    const key = await subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
      'verify',
    ]);
    let matched = false;
    for (const candidate of signatures) {
      const bytes = fromHex(candidate);
      if (bytes && (await subtle.verify('HMAC', key, bytes, signed))) matched = true;
    }
    if (!matched) throw new SignatureVerificationError('no v1 signature matches the payload');

    const skew = Math.abs((now ?? Date.now() / 1000) - timestamp);
    if (skew > tolerance) {
      throw new SignatureVerificationError(
        `the signature's timestamp is ${Math.round(skew)} s away from now (tolerance ${tolerance} s)`,
      );
    }

    let event: unknown;
    try {
      event = JSON.parse(new TextDecoder().decode(body));
    } catch (cause) {
      throw new SignatureVerificationError('the payload is not JSON', { cause });
    }
    if (!event || typeof event !== 'object' || Array.isArray(event)) {
      throw new SignatureVerificationError('the payload is not a JSON object');
    }
    return event as WebhookEvent;
  }
}

/** The tolerance (default 300 s) and clock of a call, from a number (the tolerance) or `VerifyOptions`. */
function verifyOptions(options: unknown): { tolerance: number; now: number | undefined } {
  if (typeof options === 'number') return { tolerance: checkedTolerance(options), now: undefined };
  if (!options || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError('Webhook.verify: the 4th argument is the tolerance in seconds or { tolerance, now }');
  }
  const { tolerance, now } = options as VerifyOptions;
  if (now !== undefined && (typeof now !== 'number' || Number.isNaN(now))) {
    throw new TypeError('Webhook.verify: now must be a Unix time in seconds');
  }
  return { tolerance: tolerance === undefined ? 300 : checkedTolerance(tolerance), now };
}

/** A NaN tolerance would accept any timestamp (every comparison with it is false): refused. */
function checkedTolerance(tolerance: unknown): number {
  if (typeof tolerance !== 'number' || Number.isNaN(tolerance) || tolerance < 0) {
    throw new TypeError('Webhook.verify: tolerance must be a number of seconds, 0 or more');
  }
  return tolerance;
}

function parseHeader(header: string): { timestamp: number; signatures: string[] } {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    // An element without "=" (a trailing comma, say) is ignored like any element not t or v1, as the other
    // clients do: the header still needs its t and a matching v1.
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      // At most 12 digits, as in the other clients: a longer t is no Unix time.
      if (!/^[0-9]{1,12}$/.test(value)) {
        throw new SignatureVerificationError(`malformed ${SIGNATURE_HEADER} header: t is not a Unix time`);
      }
      timestamp = Number(value);
    } else if (key === 'v1' && value !== '') {
      signatures.push(value);
    }
  }
  if (timestamp === null || signatures.length === 0) {
    throw new SignatureVerificationError(`malformed ${SIGNATURE_HEADER} header: it needs t= and v1=`);
  }
  return { timestamp, signatures };
}

/**
 * The bytes of a hex string in either case (hex is case-insensitive, RFC 4648 section 8, as in the other
 * clients), or null when it is not one (it then matches nothing).
 */
function fromHex(hex: string): Uint8Array | null {
  if (hex.length % 2 !== 0 || !/^[0-9a-f]*$/i.test(hex)) return null;
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

function webCrypto(): HmacSubtle {
  const subtle = (globalThis as unknown as { crypto?: { subtle?: HmacSubtle } }).crypto?.subtle;
  if (!subtle)
    throw new DossierError('Webhook.verify needs WebCrypto (globalThis.crypto.subtle): use Node.js 20 or later');
  return subtle;
}
