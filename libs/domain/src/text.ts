/**
 * Text Postgres cannot store as it was sent. A NUL character: `text` and `jsonb` refuse it, failing the
 * whole statement (a request, or an import's COPY of thousands of rows). A UTF-16 surrogate without its
 * partner, which JSON.parse lets through (`"\ud800"`): `jsonb` refuses it, and in `text` node-postgres's
 * UTF-8 encoding silently turns it into U+FFFD. Matched on code units (no `u` flag).
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const UNSTORABLE_EVERYWHERE = new RegExp(UNSTORABLE.source, 'g');

/**
 * The same rule as a JSON Schema pattern, for the OpenAPI document: read as JSON Schema validators such as Ajv
 * read patterns (ECMA-262 with the `u` flag), a surrogate pair is one code point outside the class and a lone
 * half is a code point inside it. (Read without the flag, it refuses the pairs too: stricter, never looser.)
 */
export const STORABLE_TEXT_PATTERN = '^[^\\u0000\\ud800-\\udfff]*$';

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

/**
 * Characters that make a short label (an API key's name) print as something else: the C0 and C1
 * controls (NUL, tab, CR, LF, ESC and its terminal sequences), DEL, the line and paragraph separators,
 * and the bidirectional embeddings, overrides and isolates that reorder what follows them. Written as
 * the inside of a character class so that the OpenAPI document states the same set as a pattern.
 */
export const CONTROL_CHARACTER_SET = '\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
const CONTROL = new RegExp(`[${CONTROL_CHARACTER_SET}]`);

/** What such a value is told, after its name: `name must not contain …`. */
export const CONTROL_CHARACTERS_TEXT =
  'must not contain control characters (line breaks, tabs, escapes, bidi controls)';

/** True for text with a control character of CONTROL_CHARACTER_SET. */
export function hasControlCharacters(value: string): boolean {
  return CONTROL.test(value);
}
