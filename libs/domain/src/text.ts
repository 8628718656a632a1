/**
 * Text Postgres cannot store as it was sent. A NUL character: `text` and `jsonb` refuse it, failing the
 * whole statement (a request, or an import's COPY of thousands of rows). A UTF-16 surrogate without its
 * partner, which JSON.parse lets through (`"\ud800"`): `jsonb` refuses it, and in `text` node-postgres's
 * UTF-8 encoding silently turns it into U+FFFD. Matched on code units (no `u` flag).
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const UNSTORABLE_EVERYWHERE = new RegExp(UNSTORABLE.source, 'g');

/** What a value holding such text is told, after its name: `full_name must not contain …`. */
export const UNSTORABLE_TEXT = 'must not contain NUL characters or unpaired UTF-16 surrogates';

/** False for text with a NUL character or an unpaired surrogate: refuse it where it comes in, naming the field. */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/**
 * The text with each NUL character and unpaired surrogate replaced by U+FFFD, for what must be stored about
 * refused text: a batch item's error names the field it refused, and that name may be the bad text itself.
 */
export function storableText(value: string): string {
  return value.replace(UNSTORABLE_EVERYWHERE, '\ufffd');
}
