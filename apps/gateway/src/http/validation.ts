import { z } from 'zod';
import {
  CONTROL_CHARACTERS_TEXT,
  CONTROL_CHARACTER_SET,
  DomainError,
  UNSTORABLE_TEXT,
  hasControlCharacters,
  isStorableText,
  type FieldIssue,
} from '@dossier/domain';

/** A field's name: its path in the body, or `root` (what the body is called) for the body itself. */
function fieldOf(path: readonly PropertyKey[], root: string): string {
  return path.map(String).join('.') || root;
}

/**
 * zod issues → the contract's `details`: one entry per field, in words an integrator can act on. `root` names
 * the body itself (`requests.2` for a batch's item: there the request's body is fine); `noun`, what its
 * members are called (a query string has parameters).
 */
export function issuesToDetails(
  issues: readonly z.core.$ZodIssue[],
  body: unknown,
  root = 'body',
  noun: 'field' | 'parameter' = 'field',
): FieldIssue[] {
  const details: FieldIssue[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        details.push(
          // A name of no characters (`{"":1}`, `?=x`) would read as the object holding it: that object is named.
          key === ''
            ? {
                field: fieldOf(issue.path, root),
                issue: `has a ${noun} with an empty name, which is not a known ${noun}`,
              }
            : { field: fieldOf([...issue.path, key], root), issue: `is not a known ${noun}` },
        );
      continue;
    }
    if (issue.code === 'invalid_type' && issue.path.length === 0) {
      details.push({ field: root, issue: 'must be a JSON object' });
      continue;
    }
    // Missing, not mistyped: nothing at that path in what the client sent (`{"name":42}` is "must be a string").
    if (issue.code === 'invalid_type' && valueAt(body, issue.path) === undefined) {
      details.push({ field: fieldOf(issue.path, root), issue: 'is required' });
      continue;
    }
    details.push({ field: fieldOf(issue.path, root), issue: wordsOf(issue) });
  }
  return details;
}

const EXPECTED_WORDS: Record<string, string> = {
  array: 'must be an array',
  object: 'must be a JSON object',
  record: 'must be a JSON object',
  string: 'must be a string',
  number: 'must be a number',
  int: 'must be a whole number',
  boolean: 'must be true or false',
};

/**
 * An issue's message: the schema's own words, or, where the schema gave none, ours instead of zod's
 * defaults ("Invalid input: expected array, received null"), which name zod's types, not JSON's.
 */
function wordsOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.message.startsWith('Invalid input:')) {
    return EXPECTED_WORDS[issue.expected] ?? `must be ${issue.expected}`;
  }
  if (issue.code === 'invalid_value' && issue.message.startsWith('Invalid option:')) {
    return `must be one of ${issue.values.map(String).join(', ')}`;
  }
  return issue.message;
}

function valueAt(body: unknown, path: readonly PropertyKey[]): unknown {
  let value = body;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

const UNSTORABLE_NAME = 'is a field name with a NUL character or an unpaired UTF-16 surrogate';
/** An adversarial body can hold thousands of bad strings; naming the first few is enough to act on. */
const MAX_TEXT_ISSUES = 20;

interface Node {
  value: unknown;
  key: string | null;
  parent: Node | null;
}

function pathOf(node: Node): string[] {
  const path: string[] = [];
  for (let n: Node | null = node; n !== null && n.key !== null; n = n.parent) path.push(n.key);
  return path.reverse();
}

/**
 * Every string value and object key of a parsed JSON body that could not be stored, named by its path
 * (`a.b`, `items.0.x`). Walks with an explicit stack: a 64 KiB body can nest thousands of levels deep.
 * `checkedApart` names a top-level field whose content is not walked: the caller validates it on its own
 * (a batch's `requests`, each item by itself, so one item's bad text is that item's error).
 */
export function unstorableText(body: unknown, root = 'body', checkedApart?: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const stack: Node[] = [{ value: body, key: null, parent: null }];
  while (stack.length > 0 && issues.length < MAX_TEXT_ISSUES) {
    const node = stack.pop()!;
    const { key, value } = node;
    if (key !== null && !isStorableText(key)) {
      issues.push({ field: fieldOf(pathOf(node), root), issue: UNSTORABLE_NAME });
    } else if (key !== null && key === checkedApart && node.parent?.parent === null) {
      continue;
    } else if (typeof value === 'string') {
      if (!isStorableText(value)) issues.push({ field: fieldOf(pathOf(node), root), issue: UNSTORABLE_TEXT });
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: String(i), parent: node });
    } else if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--)
        stack.push({ value: entries[i]![1], key: entries[i]![0], parent: node });
    }
  }
  return issues;
}

/**
 * Text of 1 to `max` characters once trimmed. The document states that rule as a pattern (`minLength` and
 * `maxLength` count the untrimmed text: "  " would pass, a padded value be refused), in `allOf` so that a
 * field's own `.regex()` keeps its `pattern`. JavaScript's `\s` is the whitespace `trim()` removes.
 * `noControls`: a label that must print as what it is (a key's name) also refuses control characters
 * anywhere, padding included (`hasControlCharacters`), and the document states that as a second pattern.
 */
export function trimmedText(max: number, { noControls = false }: { noControls?: boolean } = {}) {
  const lengthPattern = { pattern: `^\\s*\\S(?:[\\s\\S]{0,${max - 2}}\\S)?\\s*$` };
  const base = z.string({ error: 'must be a string' });
  return (
    noControls ? base.refine((v) => !hasControlCharacters(v), { message: CONTROL_CHARACTERS_TEXT, abort: true }) : base
  )
    .trim()
    .min(1, 'must be a non-empty string')
    .max(max, `must be at most ${max} characters`)
    .meta({
      maxLength: undefined,
      allOf: noControls ? [lengthPattern, { pattern: `^[^${CONTROL_CHARACTER_SET}]*$` }] : [lengthPattern],
    });
}

/**
 * The OpenAPI document's mark on a request field the server checks beyond what JSON Schema can state (a phone
 * number libphonenumber must read, a cross-field rule): `x-server-check` holds the check in words, and the
 * document appends them to the field's description. A client can send a value the schema accepts and still
 * get `400 validation_error` naming this field — only such a field (ADR 0054).
 */
export const SERVER_CHECK = 'x-server-check';

/** The mark, with `examples` of values that pass the check (what a generated client or a fuzz test can send). */
export function serverCheck(
  check: string,
  examples?: readonly string[],
): { [SERVER_CHECK]: string; examples?: string[] } {
  return { [SERVER_CHECK]: check, ...(examples ? { examples: [...examples] } : {}) };
}

/**
 * `re` (anchored with `^…$`) as the document states it for a field the server trims before it checks `re`:
 * the same expression with the blanks `trim()` removes around it. An end anchor inside a lookahead
 * (`(?!\.{1,2}$)`) becomes "then only blanks to the end".
 */
export function trimmedPattern(re: RegExp): string {
  const { source } = re;
  if (!source.startsWith('^') || !source.endsWith('$') || re.flags !== '')
    throw new Error(`trimmedPattern takes an anchored expression without flags, not /${source}/${re.flags}`);
  return `^\\s*(?:${source.slice(1, -1).replaceAll('$)', '\\s*$)')})\\s*$`;
}

/** `schema.regex(re)` on text the schema trimmed first, with the pattern the document states for it. */
export function matchesTrimmed(schema: z.ZodString, re: RegExp, message: string): z.ZodString {
  return schema.regex(re, message).meta({ pattern: trimmedPattern(re) });
}

/**
 * "At least one of `keys`" as JSON Schema, for a body's `.meta()`: a rule a `superRefine` enforces is
 * invisible to `z.toJSONSchema`, and a document without it lets a generated client send what is refused.
 */
export function anyOfRequired(keys: readonly string[]): { anyOf: { required: string[] }[] } {
  return { anyOf: keys.map((key) => ({ required: [key] })) };
}

/** "Exactly one of `keys`" as JSON Schema, for a body's `.meta()` (a field and its alias). */
export function oneOfRequired(keys: readonly string[]): { oneOf: { required: string[] }[] } {
  return { oneOf: keys.map((key) => ({ required: [key] })) };
}

/**
 * Validates a parsed JSON body against a strict schema, or throws `validation_error` naming each field.
 * Text Postgres cannot store is refused first, in any string or key at any depth, before a schema (or
 * one of its transforms) sees it: every body of every route goes through here. `checkedApart`: a top-level
 * field the caller runs through parseBody itself, piece by piece (see unstorableText).
 */
export function parseBody<S extends z.ZodType>(
  schema: S,
  body: unknown,
  root = 'body',
  checkedApart?: string,
  noun: 'field' | 'parameter' = 'field',
): z.output<S> {
  const unstorable = unstorableText(body, root, checkedApart);
  if (unstorable.length > 0) throw DomainError.validation(unstorable);
  // No body at all reads as `{}` (each missing field named); a JSON `null` is a body that is not an object.
  const result = schema.safeParse(body === undefined ? {} : body);
  if (!result.success) throw DomainError.validation(issuesToDetails(result.error.issues, body, root, noun));
  return result.data;
}

/** A parsed query string, validated as parseBody validates a body: its members are parameters, itself `query`. */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  return parseBody(schema, query, 'query', undefined, 'parameter');
}
