import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import fc from 'fast-check';

// An OpenAPI document is walked freely here: its shape is JSON Schema's and OpenAPI's, not a TypeScript type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

/** The mark of a request field the server checks beyond its JSON Schema (the gateway's validation.ts). */
export const SERVER_CHECK = 'x-server-check';

/** The methods whose body the server reads. */
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);

/** One operation of the document, with its parameters' `$ref`s resolved. */
export interface DocumentedOperation {
  method: string;
  path: string;
  operationId: string;
  op: Json;
  parameters: Json[];
  /** The JSON request body's schema, when the operation takes one. */
  body?: Json;
  bodyRequired: boolean;
  /** A bearer key is required. */
  secured: boolean;
}

/**
 * An OpenAPI 3.1 document read for testing: its operations, and a validator for any schema in it (each
 * `#/components/…` reference resolved against the document). Patterns are read as Ajv reads them, with the
 * `u` flag; `format` is checked too.
 */
export class OpenApiDocument {
  private readonly ajv = new Ajv2020({ allErrors: true, strict: false });
  private readonly cache = new Map<string, ValidateFunction>();
  readonly operations: DocumentedOperation[];

  constructor(readonly doc: Json) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: 'openapi.json', components: doc['components'] });
    this.operations = Object.entries(doc['paths'] as Json).flatMap(([path, item]) =>
      Object.entries(item as Json).map(([method, op]: [string, Json]) => {
        const body = op['requestBody']?.['content']?.['application/json']?.['schema'] as Json | undefined;
        return {
          method,
          path,
          operationId: op['operationId'] as string,
          op,
          parameters: ((op['parameters'] ?? []) as Json[]).map((p) => this.deref(p)),
          ...(body ? { body } : {}),
          bodyRequired: op['requestBody']?.['required'] === true,
          secured: ((op['security'] ?? []) as unknown[]).length > 0,
        };
      }),
    );
  }

  /** The object a `$ref` points at (one level), or the node itself. */
  deref(node: Json): Json {
    const ref = node['$ref'] as string | undefined;
    if (!ref) return node;
    return ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<Json>((at, seg) => at[seg.replace(/~1/g, '/').replace(/~0/g, '~')] as Json, this.doc);
  }

  validator(schema: Json): ValidateFunction {
    const text = JSON.stringify(schema).replaceAll('"#/components/', '"openapi.json#/components/');
    let validate = this.cache.get(text);
    if (!validate) this.cache.set(text, (validate = this.ajv.compile(JSON.parse(text) as Json)));
    return validate;
  }

  accepts(schema: Json, value: unknown): boolean {
    return this.validator(schema)(value) === true;
  }

  /** The fields of an operation the server checks beyond their schema: parameters and top-level body properties. */
  serverChecked(operation: DocumentedOperation): Set<string> {
    const names = operation.parameters.filter((p) => p['schema']?.[SERVER_CHECK]).map((p) => p['name'] as string);
    const properties = (operation.body ? this.deref(operation.body)['properties'] : undefined) as Json | undefined;
    for (const [name, schema] of Object.entries(properties ?? {})) if ((schema as Json)[SERVER_CHECK]) names.push(name);
    return new Set(names);
  }
}

/** A request to send: built from the document, valid or not. */
export interface GeneratedRequest {
  valid: boolean;
  /** What makes an invalid request invalid (`body.phone: a value its schema refuses`, `no key`, …). */
  what: string;
  method: string;
  pathParams: Record<string, string>;
  query: [string, string][];
  headers: Record<string, string>;
  /** A JSON body, or raw bytes with their content type. */
  body?: { json: unknown } | { raw: string; contentType: string };
  /** Send the account's key (operations that require one). */
  auth: boolean;
}

/** Known values for parameters by name (ids the server gave earlier): a path id from here names something. */
export type KnownValues = Record<string, readonly string[]>;

/** The longest string (in code points) generated for a schema that allows longer: requests stay small. */
const STRING_CAP = 24;
/** The most array items generated where the schema allows more. */
const ARRAY_CAP = 3;

/** A characters mix for free text: ASCII most of the time, and blanks, accents, CJK, emoji and the odd control. */
const TEXT_UNIT = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(' ', '\t', '\n', '\u00a0', 'é', 'ß', 'ı', 'Ω', '中', '😀', '\u202e', '\u0007'),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
);

/** `pattern` without lookarounds, which fast-check cannot generate from: what they refuse is then filtered out. */
function withoutLookarounds(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\') {
      out += pattern.slice(i, i + 2);
      i++;
    } else if (/^\(\?<?[=!]/.test(pattern.slice(i))) {
      let depth = 0;
      for (; i < pattern.length; i++) {
        if (pattern[i] === '\\') i++;
        else if (pattern[i] === '(') depth++;
        else if (pattern[i] === ')' && --depth === 0) break;
      }
    } else out += pattern[i];
  }
  return out;
}

function patternsOf(schema: Json): string[] {
  return [schema['pattern'], ...((schema['allOf'] ?? []) as Json[]).map((s) => s['pattern'])].filter(
    (p): p is string => typeof p === 'string',
  );
}

/** Strings that match `pattern`: fast-check generates from the expression itself. */
function matching(pattern: string): fc.Arbitrary<string> {
  try {
    return fc.stringMatching(new RegExp(pattern, 'u'), { size: 'small' });
  } catch {
    // e.g. "Assertions of kind Lookahead not implemented yet"
    return fc.stringMatching(new RegExp(withoutLookarounds(pattern), 'u'), { size: 'small' });
  }
}

function freeText(schema: Json): fc.Arbitrary<string> {
  const minLength = (schema['minLength'] as number | undefined) ?? 0;
  const maxLength = Math.max(
    minLength,
    Math.min((schema['maxLength'] as number | undefined) ?? STRING_CAP, STRING_CAP),
  );
  return fc.string({ unit: TEXT_UNIT, minLength, maxLength });
}

/**
 * Values the schema accepts, generated from the schema: enums, numbers within bounds, objects with their
 * required properties (and one branch of an `anyOf` of `required`), strings from their first pattern or free
 * text; every value is checked against the whole schema with Ajv, so whatever a generator does not model
 * (a second pattern, a length counted after a pattern) only filters.
 */
export function valuesOf(doc: OpenApiDocument, node: Json): fc.Arbitrary<unknown> {
  const schema = doc.deref(node);
  const examples = (schema['examples'] ?? []) as unknown[];
  // A schema's examples are values it accepts that the server takes too (a phone number libphonenumber reads).
  const shapes =
    examples.length > 0
      ? fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...examples) }, { weight: 2, arbitrary: shapeOf(doc, schema) })
      : shapeOf(doc, schema);
  return shapes.filter((value) => doc.accepts(schema, value));
}

function shapeOf(doc: OpenApiDocument, schema: Json): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema['const']);
  if (Array.isArray(schema['enum'])) return fc.constantFrom(...(schema['enum'] as unknown[]));
  const anyOf = (schema['anyOf'] ?? schema['oneOf']) as Json[] | undefined;
  if (anyOf && !anyOf.every(isRequiredOnly)) return fc.oneof(...anyOf.map((branch) => valuesOf(doc, branch)));
  switch (schema['type']) {
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: schema['minimum'] ?? -1_000_000, max: schema['maximum'] ?? 1_000_000 });
    case 'number':
      return fc.double({
        min: schema['minimum'] ?? -1e6,
        max: schema['maximum'] ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'string': {
      const [pattern] = patternsOf(schema);
      const format = FORMATS[schema['format'] as string];
      const shaped = pattern ? matching(pattern) : format;
      return shaped ? fc.oneof({ weight: 3, arbitrary: shaped }, freeText(schema)) : freeText(schema);
    }
    case 'array': {
      const minLength = (schema['minItems'] as number | undefined) ?? 0;
      const maxLength = Math.max(
        minLength,
        Math.min((schema['maxItems'] as number | undefined) ?? ARRAY_CAP, ARRAY_CAP),
      );
      return fc.array(valuesOf(doc, (schema['items'] ?? {}) as Json), { minLength, maxLength });
    }
    case 'object':
      return objectsOf(doc, schema);
    default:
      return fc.constantFrom<unknown>('text', 1, true, null, {});
  }
}

/** Strings of a `format` (where a schema has no pattern to generate from): free text would seldom be one. */
const FORMATS: Record<string, fc.Arbitrary<string>> = {
  email: fc.emailAddress(),
  'date-time': fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  uri: fc.webUrl(),
};

const isRequiredOnly = (branch: Json) => Object.keys(branch).length === 1 && Array.isArray(branch['required']);

/** The keys of an object schema's `anyOf` or `oneOf` of `required` branches (one of them / exactly one). */
function requiredBranches(schema: Json, list: 'anyOf' | 'oneOf'): string[][] {
  const branches = (schema[list] ?? []) as Json[];
  return branches.every(isRequiredOnly) ? branches.map((b) => b['required'] as string[]) : [];
}

function objectsOf(doc: OpenApiDocument, schema: Json): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema['properties'] ?? {}) as Record<string, Json>;
  const model = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, valuesOf(doc, v)]));
  const required = (schema['required'] ?? []) as string[];
  const branches = [...requiredBranches(schema, 'anyOf'), ...requiredBranches(schema, 'oneOf')];
  const withKeys = (keys: string[]) => fc.record(model, { requiredKeys: [...new Set([...required, ...keys])] });
  return branches.length > 0 ? fc.oneof(...branches.map(withKeys)) : withKeys([]);
}

/** Texts worth trying against any string schema: empty, blank, too long, unstorable, another alphabet. */
const EDGE_STRINGS = [
  '',
  ' ',
  '\t\n',
  '\u0000',
  'a\ud800b',
  '\udc00',
  'x'.repeat(300),
  'x'.repeat(2100),
  '€'.repeat(80),
];
/** Texts worth trying against a number read from text (a query parameter). */
const EDGE_NUMBERS = ['0', '-1', '1.5', '101', '1e3', 'abc', '+5'];
/** One value of each JSON type. */
const ANY_TYPES: unknown[] = ['text', 42, 1.5, -1, 0, true, null, [], {}, ['text']];
/** How many free texts are tried for one schema's refused strings. */
const TEXTS_TRIED = 200;

/**
 * Strings `accepts` refuses, decided up front (a schema may accept every string: then there are none): the
 * edge strings, then free texts from a seeded sample.
 */
function refusedTexts(accepts: (text: string) => boolean, extra: string[] = []): string[] {
  const texts = fc.sample(fc.string({ unit: TEXT_UNIT, maxLength: STRING_CAP }), { seed: 54, numRuns: TEXTS_TRIED });
  return [...new Set([...EDGE_STRINGS, ...extra, ...texts])].filter((t) => !accepts(t));
}

/**
 * Values the schema refuses: another JSON type, an edge string, a number past a bound, or free text the
 * schema does not match. An array's items are left alone (a batch answers a bad item in its place): an
 * array is refused as a whole, by its type or its number of items.
 */
export function refusedValuesOf(doc: OpenApiDocument, node: Json): fc.Arbitrary<unknown> | null {
  const schema = doc.deref(node);
  const refused = (values: unknown[]) => values.filter((v) => !doc.accepts(schema, v));
  const options: fc.Arbitrary<unknown>[] = [];
  const fixed = refused(ANY_TYPES);
  if (fixed.length > 0) options.push(fc.constantFrom(...fixed));
  if (schema['type'] === 'string') {
    const texts = refusedTexts((t) => doc.accepts(schema, t));
    if (texts.length > 0) options.push(fc.constantFrom(...texts));
  }
  if (schema['type'] === 'integer' || schema['type'] === 'number') {
    const bounds = refused([
      ...(schema['minimum'] !== undefined ? [(schema['minimum'] as number) - 1] : []),
      ...(schema['maximum'] !== undefined ? [(schema['maximum'] as number) + 1] : []),
      0.5,
    ]);
    if (bounds.length > 0) options.push(fc.constantFrom(...bounds));
  }
  if (schema['type'] === 'array') {
    if (schema['minItems'] !== undefined && refused([[]]).length > 0) options.push(fc.constant([]));
    const max = schema['maxItems'] as number | undefined;
    if (max !== undefined)
      options.push(
        (valuesOf(doc, { ...schema, minItems: 1 }) as fc.Arbitrary<unknown[]>).map((items) =>
          Array<unknown>(max + 1).fill(items[0]),
        ),
      );
  }
  return options.length > 0 ? fc.oneof(...options) : null;
}

/** A query parameter's value as the document reads the text: an integer parameter's digits as a number. */
export function queryValue(schema: Json, text: string): unknown {
  return schema['type'] === 'integer' && /^-?\d+$/.test(text) ? Number(text) : text;
}

/** Text without a lone surrogate (String.prototype.isWellFormed, which this TypeScript target lacks). */
const wellFormed = (t: string) => !/[\ud800-\udfff]/.test(t.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''));

/** A value as a query string carries it: integers as digits, text as itself. */
const queryText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** What a header can carry here: visible ASCII, no blanks around it (fetch would strip them). */
const headerSafe = (v: string) => /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(v);

/**
 * Texts a query or header parameter's schema refuses, as they can be sent: a URL carries well-formed text
 * only (a lone surrogate would arrive as U+FFFD), a header visible ASCII.
 */
function refusedParameterTexts(doc: OpenApiDocument, parameter: Json): string[] {
  const schema = parameter['schema'] as Json;
  const sendable = parameter['in'] === 'header' ? headerSafe : wellFormed;
  return refusedTexts((t) => doc.accepts(schema, queryValue(schema, t)), EDGE_NUMBERS).filter(sendable);
}

/**
 * Header values: what HTTP can carry (visible ASCII). A header without constraints gets one of its examples
 * (`Prefer: wait=5`), or generated text.
 */
function headerValues(doc: OpenApiDocument, parameter: Json): fc.Arbitrary<string> {
  const examples = Object.values((parameter['examples'] ?? {}) as Json).map((e) => (e as Json)['value'] as string);
  if (examples.length > 0) return fc.constantFrom(...examples);
  return (valuesOf(doc, parameter['schema'] as Json) as fc.Arbitrary<string>).filter(headerSafe);
}

/** Every valid request of the operation: its parameters and body from their schemas, with the key it needs. */
export function validRequestsOf(
  doc: OpenApiDocument,
  operation: DocumentedOperation,
  known: KnownValues = {},
): fc.Arbitrary<GeneratedRequest> {
  const byPlace = (place: string) => operation.parameters.filter((p) => p['in'] === place);
  const orKnown = (p: Json, generated: fc.Arbitrary<unknown>) => {
    const pool = known[p['name'] as string] ?? [];
    return pool.length > 0 ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...pool) }, generated) : generated;
  };
  const pathParams = fc.record(
    Object.fromEntries(
      byPlace('path').map((p) => [
        p['name'] as string,
        orKnown(
          p,
          (valuesOf(doc, p['schema'] as Json) as fc.Arbitrary<string>).filter((v) => v.length > 0),
        ),
      ]),
    ),
  ) as fc.Arbitrary<Record<string, string>>;
  const query = fc.tuple(
    ...byPlace('query').map((p) => {
      const values = orKnown(
        p,
        valuesOf(doc, p['schema'] as Json).filter((v) => wellFormed(queryText(v))),
      );
      const present = p['required'] ? fc.constant(true) : fc.boolean();
      return fc
        .tuple(present, values)
        .map(([on, v]): [string, string][] => (on ? [[p['name'] as string, queryText(v)]] : []));
    }),
  );
  const headers = fc.tuple(
    ...byPlace('header').map((p) =>
      fc.tuple(fc.boolean(), headerValues(doc, p)).map(([on, v]) => (on ? { [p['name'] as string]: v } : {})),
    ),
  );
  const json = operation.body ? valuesOf(doc, operation.body).map((value) => ({ json: value })) : undefined;
  const body = json ? (operation.bodyRequired ? json : fc.option(json, { nil: undefined })) : fc.constant(undefined);
  return fc.record({ pathParams, query, headers, body }).map((r) => ({
    valid: true,
    what: 'valid',
    method: operation.method.toUpperCase(),
    pathParams: r.pathParams,
    query: r.query.flat(),
    headers: Object.assign({}, ...r.headers) as Record<string, string>,
    ...(r.body ? { body: r.body } : {}),
    auth: operation.secured,
  }));
}

/** Body bytes the server cannot take: not JSON, not `application/json`, or over its 64 KiB. */
const BAD_BODIES: { what: string; raw: string; contentType: string }[] = [
  { what: 'a body that is not JSON', raw: '{"unterminated": ', contentType: 'application/json' },
  { what: 'a text/plain body', raw: 'phone=+14155552671', contentType: 'text/plain' },
  { what: 'a body over 64 KiB', raw: JSON.stringify({ text: 'x'.repeat(70_000) }), contentType: 'application/json' },
];

type Mutation = (request: GeneratedRequest) => GeneratedRequest;

/**
 * Requests the document says are wrong, each one valid request with one thing broken: a body property the
 * body schema refuses (missing, unknown, of another type or value), a body that is no object, a query
 * parameter or header its schema refuses, no key on an operation that needs one, body bytes that are not
 * JSON, not JSON's media type or too large, or a method the path does not take.
 */
export function invalidRequestsOf(
  doc: OpenApiDocument,
  operation: DocumentedOperation,
  known: KnownValues = {},
): fc.Arbitrary<GeneratedRequest> {
  const mutations: fc.Arbitrary<Mutation>[] = [];
  const broken =
    (what: string, change: (r: GeneratedRequest) => Partial<GeneratedRequest>): Mutation =>
    (r) => ({ ...r, ...change(r), valid: false, what });
  const fields = (r: GeneratedRequest): Json =>
    r.body && 'json' in r.body && typeof r.body.json === 'object' && r.body.json !== null && !Array.isArray(r.body.json)
      ? { ...(r.body.json as Json) }
      : {};
  const withBody = (what: string, json: (fields: Json) => unknown) =>
    broken(what, (r) => ({ body: { json: json(fields(r)) } }));
  const body = operation.body ? doc.deref(operation.body) : undefined;
  if (body) {
    const without = (keys: string[]) => (f: Json) => {
      for (const key of keys) delete f[key];
      return f;
    };
    mutations.push(
      fc.constantFrom<unknown>([], 'text', 1, null).map((json) => withBody('a body that is not an object', () => json)),
      fc.constant(withBody('an unknown body field', (f) => ({ ...f, fuzz_unknown_field: 1 }))),
    );
    for (const key of (body['required'] ?? []) as string[])
      mutations.push(fc.constant(withBody(`body.${key} missing`, without([key]))));
    for (const list of ['anyOf', 'oneOf'] as const) {
      const keys = requiredBranches(body, list).flat();
      if (keys.length > 0) mutations.push(fc.constant(withBody(`none of body.${keys.join(', ')}`, without(keys))));
    }
    // Exactly one of a field and its alias (`password`, `passwort`): both, the second unlike the first.
    const aliases = requiredBranches(body, 'oneOf').flat();
    if (aliases.length > 1)
      mutations.push(
        fc.constant(
          withBody(`more than one of body.${aliases.join(', ')}`, (f) => {
            const given = aliases.map((k) => f[k]).find((v): v is string => typeof v === 'string');
            if (given === undefined) return f;
            const unlike = given.slice(0, -1) + (given.endsWith('#') ? '$' : '#');
            for (const key of aliases) f[key] ??= unlike;
            return f;
          }),
        ),
      );
    // A field present without what it depends on (`sites` without `username`).
    for (const [key, needs] of Object.entries((body['dependentRequired'] ?? {}) as Record<string, string[]>)) {
      const values = valuesOf(doc, ((body['properties'] ?? {}) as Json)[key] as Json);
      mutations.push(
        values.map((value) =>
          withBody(`body.${key} without ${needs.join(', ')}`, (f) => without(needs)({ ...f, [key]: value })),
        ),
      );
    }
    for (const [key, schema] of Object.entries((body['properties'] ?? {}) as Record<string, Json>)) {
      const values = refusedValuesOf(doc, schema);
      if (values)
        mutations.push(
          values.map((value) => withBody(`body.${key} refused by its schema`, (f) => ({ ...f, [key]: value }))),
        );
    }
  }
  for (const parameter of operation.parameters.filter((p) => p['in'] === 'query' || p['in'] === 'header')) {
    const texts = refusedParameterTexts(doc, parameter);
    if (texts.length === 0) continue;
    const name = parameter['name'] as string;
    mutations.push(
      fc.constantFrom(...texts).map((text) =>
        parameter['in'] === 'query'
          ? broken(`query ${name} refused by its schema`, (r) => ({
              query: [...r.query.filter(([n]) => n !== name), [name, text]],
            }))
          : broken(`header ${name} refused by its schema`, (r) => ({ headers: { ...r.headers, [name]: text } })),
      ),
    );
  }
  if (operation.secured) mutations.push(fc.constant(broken('no key', () => ({ auth: false }))));
  if (BODY_METHODS.has(operation.method))
    mutations.push(
      fc
        .constantFrom(...BAD_BODIES)
        .map((b) => broken(b.what, () => ({ body: { raw: b.raw, contentType: b.contentType } }))),
    );
  const taken = Object.keys(doc.doc['paths'][operation.path] as Json);
  const other = ['patch', 'put', 'delete', 'post', 'get'].find((m) => !taken.includes(m));
  if (other)
    mutations.push(fc.constant(broken(`method ${other.toUpperCase()}`, () => ({ method: other.toUpperCase() }))));
  return fc
    .tuple(validRequestsOf(doc, operation, known), fc.oneof(...mutations))
    .map(([request, mutate]) => mutate(request));
}
