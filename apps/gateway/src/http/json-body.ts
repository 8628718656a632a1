import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '@dossier/domain';

export const BODY_LIMIT_BYTES = 64 * 1024;

type Decoder = (body: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>;

/**
 * The largest brotli window decoded: 2^22 bytes, the reference encoder's default, which it writes whatever
 * the input's size. Brotli's decoder fills a ring buffer of up to the window before its first byte of output,
 * so zlib's maxOutputLength cannot stop a bomb sooner: a 77-byte stream with a 2^24 window cost 16 MiB and
 * ~50 ms of CPU (ADR 0052); with 2^22, 4 MiB and ~12 ms. gzip's and deflate's window is 32 KiB.
 */
const BROTLI_MAX_WINDOW_BITS = 22;
const brotli = promisify(brotliDecompress);
/** The brotli decode under way, if any: one at a time, so their ring buffers never add up. */
let brotliQueue: Promise<unknown> = Promise.resolve();

const decodeBrotli: Decoder = (body, options) => {
  const bits = brotliWindowBits(body);
  if (bits !== null && bits > BROTLI_MAX_WINDOW_BITS)
    return Promise.reject(
      new DomainError(
        'unsupported_media_type',
        `send br with a window of at most 4 MiB (lgwin ${BROTLI_MAX_WINDOW_BITS})`,
      ),
    );
  const decoded = brotliQueue.then(() => brotli(body, options));
  brotliQueue = decoded.catch(() => undefined);
  return decoded;
};

/** What each `Content-Encoding` a body may arrive in is decoded with (zlib's one-shot decoders). */
const DECODERS = new Map<string, Decoder>([
  ['gzip', promisify(gunzip)],
  ['x-gzip', promisify(gunzip)], // RFC 9110 §8.4.1.3: a recipient treats it as gzip
  ['deflate', promisify(inflate)], // the zlib format, as HTTP defines `deflate` (RFC 9110 §8.4.1.2)
  ['br', decodeBrotli],
]);

/**
 * A brotli stream's window size in bits, from its first byte (RFC 7932 §9.1: bits read from the least
 * significant); null for no stream, or a code RFC 7932 leaves invalid (the decoder refuses it).
 */
export function brotliWindowBits(body: Buffer): number | null {
  const first = body[0];
  if (first === undefined) return null;
  if ((first & 1) === 0) return 16;
  const n = (first >> 1) & 7;
  if (n !== 0) return 17 + n;
  const m = (first >> 4) & 7;
  if (m === 1) return null;
  return m === 0 ? 17 : 8 + m;
}

export const tooLarge = (): DomainError =>
  new DomainError('payload_too_large', `the body is larger than ${BODY_LIMIT_BYTES / 1024} KiB`);
export const notJsonMediaType = (): DomainError =>
  new DomainError('unsupported_media_type', 'send the body as JSON with Content-Type: application/json');

/**
 * Only `application/json` bodies are accepted (any other type is 415, via Fastify), and they are read
 * strictly, never rewritten: a `charset` other than UTF-8 is 415, a `Content-Encoding` is decoded (gzip,
 * deflate, br: at most 64 KiB once decoded, too) or 415, bytes that are not UTF-8 are `invalid_json`. An
 * empty body is treated as no body; anything unparseable is `invalid_json`. A request with two
 * `Content-Type` headers is 400 before its body is read: Node keeps the first, and which one the client
 * meant cannot be known.
 */
export function installJsonBodyParser(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    if (headerCount(request.raw, 'content-type') > 1)
      done(
        new DomainError('validation_error', 'Content-Type is sent more than once; send it once, as application/json'),
      );
    else done(null, payload);
  });
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES },
    async (request: FastifyRequest, body: Buffer) => parseJsonBody(await decodedBody(request.raw, body)),
  );
}

/** The body's bytes as its `Content-Type` and `Content-Encoding` describe them, or a refusal. */
export async function decodedBody(raw: IncomingMessage, body: Buffer): Promise<Buffer> {
  const contentType = raw.headers['content-type'] ?? '';
  if (charsetsOf(contentType).some((charset) => charset !== 'utf-8' && charset !== 'utf8'))
    throw new DomainError('unsupported_media_type', 'send the body as UTF-8 (charset=utf-8, or no charset)');
  const codings = codingsOf(raw.headers['content-encoding']);
  if (codings.length === 0) return body;
  const decode = codings.length === 1 ? DECODERS.get(codings[0]!) : undefined;
  if (decode === undefined)
    throw new DomainError(
      'unsupported_media_type',
      'send the body with one Content-Encoding of gzip, deflate or br, or none',
    );
  try {
    // zlib stops at the limit: a small body that inflates to gigabytes costs at most 64 KiB of output.
    return await decode(body, { maxOutputLength: BODY_LIMIT_BYTES });
  } catch (err) {
    if (err instanceof DomainError) throw err;
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
    throw new DomainError('invalid_json', `the body is not valid ${codings[0]} data`);
  }
}

/** Strict UTF-8 (no byte is replaced with U+FFFD), then JSON; nothing at all (or only whitespace) is no body. */
export function parseJsonBody(bytes: Buffer): unknown {
  if (!isUtf8(bytes)) throw new DomainError('invalid_json', 'the body is not valid UTF-8');
  const text = bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new DomainError('invalid_json', 'the body is not valid JSON');
  }
}

/** Every `charset` parameter of a Content-Type value, lower-cased and unquoted. */
export function charsetsOf(contentType: string): string[] {
  const charsets: string[] = [];
  for (const parameter of contentType.split(';').slice(1)) {
    const eq = parameter.indexOf('=');
    if (eq < 0 || parameter.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    charsets.push(
      parameter
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase(),
    );
  }
  return charsets;
}

/** The content codings applied to a body, in order, without `identity` (which changes nothing). */
export function codingsOf(header: string | undefined): string[] {
  if (header === undefined) return [];
  return header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/** How many times a header came on the wire (Node keeps only the first of a repeated Content-Type). */
function headerCount(raw: IncomingMessage, name: string): number {
  let count = 0;
  const headers = raw.rawHeaders;
  for (let i = 0; i < headers.length; i += 2) {
    const header = headers[i]!;
    if (header.length === name.length && header.toLowerCase() === name) count++;
  }
  return count;
}
