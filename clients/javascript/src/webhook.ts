import { DossierError, SignatureVerificationError } from './errors.js';
import type { WebhookEvent } from './types.js';

/** The header each delivery is signed in. */
export const SIGNATURE_HEADER = 'Dossier-Signature';

/** Options of {@link Webhook.verify}. */
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
   * (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`); `secret` the webhook's `whsec_…`
   * secret. Any one of several `v1=` values may match; each is compared in constant time
   * (WebCrypto's HMAC verify).
   *
   * Rejects with `SignatureVerificationError` when the header is missing or malformed, no signature
   * matches, `t` is more than `tolerance` seconds from now, or the payload is not a JSON object.
   */
  static async verify(
    payload: string | Uint8Array,
    header: string | null | undefined,
    secret: string,
    options: VerifyOptions = {},
  ): Promise<WebhookEvent> {
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

    const tolerance = options.tolerance ?? 300;
    const now = options.now ?? Date.now() / 1000;
    const skew = Math.abs(now - timestamp);
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

function parseHeader(header: string): { timestamp: number; signatures: string[] } {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) throw new SignatureVerificationError(`malformed ${SIGNATURE_HEADER} header`);
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (!/^[0-9]+$/.test(value)) {
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

/** The bytes of a lower-case hex string, or null when it is not one (it then matches nothing). */
function fromHex(hex: string): Uint8Array | null {
  if (hex.length % 2 !== 0 || !/^[0-9a-f]*$/.test(hex)) return null;
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
