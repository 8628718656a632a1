import { z } from 'zod';
import { STORABLE_TEXT_PATTERN, type ErrorCode } from '@dossier/domain';
import { HTTP_STATUS } from '../http/error-envelope';
import { SERVER_CHECK } from '../http/validation';
import { COMPONENT_SCHEMAS, ERROR_CODE_MEANINGS } from './components.schema';
import type { DocumentedRoute } from './documented-route';

type Json = Record<string, unknown>;

const SCHEMA_REF = '#/components/schemas/';
const JSON_TYPE = 'application/json';
const TO_JSON_SCHEMA = { target: 'draft-2020-12', unrepresentable: 'any' } as const;

const TAGS = [
  { name: 'auth', description: 'Accounts, logins and API keys' },
  { name: 'account', description: 'The calling account and its credit balance' },
  { name: 'lookups', description: 'Person, company, e-mail and phone lookups; each one costs credits' },
  {
    name: 'webhooks',
    description: 'Signed event deliveries to your HTTPS endpoints (search.completed, search.failed, batch.completed)',
  },
  { name: 'operations', description: 'Health, metrics and this document' },
];

const HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description:
      "The request's id: the client's own X-Request-Id when it sent one of at most 128 safe characters, otherwise a fresh one",
    schema: { type: 'string' },
  },
  'RateLimit-Limit': {
    description: 'Requests allowed in a burst (per key, or per client address on public routes)',
    schema: { type: 'integer' },
  },
  'RateLimit-Remaining': { description: 'Requests left in the current burst', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the burst allowance is full again', schema: { type: 'integer' } },
  'X-Credits-Spent': {
    description: 'Credits this call charged (0 while pending, on failure or when nothing was found)',
    schema: { type: 'integer' },
  },
  'X-Credits-Remaining': { description: 'The balance after this call', schema: { type: 'integer' } },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
  'Preference-Applied': {
    description: '`respond-async` when the request asked for it (RFC 7240)',
    schema: { type: 'string', enum: ['respond-async'] },
  },
  Location: {
    description: 'Where to poll for the outcome: /v1/searches/{id} (a batch: /v1/batches/{id})',
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } },
  'WWW-Authenticate': { description: '`Bearer realm="dossier"`', schema: { type: 'string' } },
};

const PARAMETERS: Record<string, Json> = {
  'X-Request-Id': {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description:
      'Your own id for the request, echoed in the answer and the logs when it is 1 to 128 of ' +
      '`A-Z a-z 0-9 . _ ~ : @ + = / -`. Any other value (longer, or with another character) is not refused: ' +
      'the server replaces it with an id of its own, which the answer carries.',
    schema: { type: 'string' },
  },
  Prefer: {
    name: 'Prefer',
    in: 'header',
    required: false,
    description:
      'RFC 7240. `wait=N`: wait up to N seconds for the outcome (default 10, capped by the server, 60 by default) before answering 202; `respond-async`: answer 202 at once.',
    schema: { type: 'string' },
    examples: { wait: { value: 'wait=5' }, async: { value: 'respond-async' } },
  },
  'Idempotency-Key': {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Within 24 hours the same key from the same account returns the same search and charges once; the same key with a different body is 409 idempotency_conflict.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]{1,255}$' },
  },
};

const ref = (section: 'schemas' | 'headers' | 'parameters', id: string): Json => ({
  $ref: `#/components/${section}/${id}`,
});

/** Every component id the builder may reference. */
const COMPONENT_IDS = new Set<string>(Object.keys(COMPONENT_SCHEMAS));

/** The keywords of a JSON Schema that hold sub-schemas a request's values are checked against. */
const SUBSCHEMA_LISTS = ['anyOf', 'allOf', 'oneOf', 'prefixItems'] as const;

/**
 * What the server checks in every request schema beyond zod's own output, stated in the document: no string
 * holds text Postgres cannot store (parseBody refuses it in any field: `STORABLE_TEXT_PATTERN`), and a field
 * the server checks further (`x-server-check`) says so in its description. Walks sub-schemas, not examples.
 */
function requestSchema(node: Json): Json {
  const out: Json = { ...node };
  const types = ([] as unknown[]).concat(out['type'] ?? []);
  if (types.includes('string') && out['enum'] === undefined && out['const'] === undefined)
    out['allOf'] = [...((out['allOf'] as Json[] | undefined) ?? []), { pattern: STORABLE_TEXT_PATTERN }];
  const check = out[SERVER_CHECK];
  if (typeof check === 'string') {
    const description = typeof out['description'] === 'string' ? `${out['description']} ` : '';
    out['description'] = `${description}The server also refuses (400 validation_error) ${check}.`;
  }
  if (out['properties'])
    out['properties'] = Object.fromEntries(
      Object.entries(out['properties'] as Record<string, Json>).map(([k, v]) => [k, requestSchema(v)]),
    );
  if (out['items'] && typeof out['items'] === 'object') out['items'] = requestSchema(out['items'] as Json);
  for (const list of SUBSCHEMA_LISTS)
    if (Array.isArray(out[list])) out[list] = (out[list] as Json[]).map((sub) => requestSchema(sub));
  return out;
}

/**
 * A zod schema as an OpenAPI 3.1 (JSON Schema 2020-12) schema. Sub-schemas that are components
 * come back from zod as `$defs` entries; they are pointed at `components.schemas` instead. A request
 * schema (`input`) also states the checks of `requestSchema`.
 */
function schemaOf(schema: z.ZodType, io: 'input' | 'output'): Json {
  const json: Json = { ...z.toJSONSchema(schema, { ...TO_JSON_SCHEMA, io }) };
  const defs = Object.keys((json['$defs'] as Json | undefined) ?? {});
  for (const id of defs) {
    if (!COMPONENT_IDS.has(id)) throw new Error(`schema $defs/${id} is not a known component`);
    // Components are emitted for output only; a body reusing one would need an input variant.
    if (io === 'input') throw new Error(`a request body refers to component ${id}; declare a separate input schema`);
  }
  delete json['$schema'];
  delete json['$defs'];
  const resolved = JSON.parse(JSON.stringify(json).replaceAll('"#/$defs/', `"${SCHEMA_REF}`)) as Json;
  return io === 'input' ? requestSchema(resolved) : resolved;
}

function componentSchemas(): Json {
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    ...TO_JSON_SCHEMA,
    io: 'output',
    uri: (id) => SCHEMA_REF + id,
  });
  return Object.fromEntries(
    [...COMPONENT_IDS].sort().map((id) => {
      const schema: Json = { ...schemas[id] };
      if (Object.keys(schema).length === 0) throw new Error(`component ${id} is not in zod's registry`);
      delete schema['$schema'];
      delete schema['$id'];
      return [id, schema];
    }),
  );
}

function headersFor(route: DocumentedRoute, status: number): Json {
  const { doc } = route;
  const names = ['X-Request-Id'];
  if (doc.errors.includes('rate_limited')) names.push('RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset');
  // A 402 reports the balance the lookup did not fit in, a failed lookup (503) the balance after its release.
  if ((doc.credits ?? doc.lookup) && (status < 300 || status === 402 || status === 503))
    names.push('X-Credits-Spent', 'X-Credits-Remaining');
  if (doc.lookup && status < 300) names.push('Idempotent-Replayed', 'Preference-Applied');
  if (status === 202) names.push('Location');
  if (status === 202 || status === 429 || (status === 503 && doc.errors.includes('unavailable')))
    names.push('Retry-After');
  if (status === 401 && !route.isPublic) names.push('WWW-Authenticate');
  return Object.fromEntries(names.map((n) => [n, ref('headers', n)]));
}

/**
 * The example a schema carries (`.meta({ examples: [...] })`), checked against the schema itself: "Try it
 * out" in /docs pre-fills requests with these, so an example that does not validate is a build error.
 */
function exampleOf(route: DocumentedRoute, what: string, schema: z.ZodType): unknown {
  const example = (z.globalRegistry.get(schema)?.examples as unknown[] | undefined)?.[0];
  if (example === undefined) throw new Error(`${route.operationId}: the ${what} schema has no example`);
  const checked = schema.safeParse(example);
  if (!checked.success) {
    throw new Error(`${route.operationId}: the ${what} example does not validate: ${checked.error.message}`);
  }
  return example;
}

function jsonContent(route: DocumentedRoute, what: string, schema: z.ZodType, io: 'input' | 'output'): Json {
  return { [JSON_TYPE]: { schema: schemaOf(schema, io), example: exampleOf(route, what, schema) } };
}

/**
 * A request body with several named examples (`examples`, which OpenAPI allows instead of `example`):
 * the schema's own as `default`, then the route's, each checked against the schema like the default.
 */
function namedExamples(
  route: DocumentedRoute,
  body: z.ZodType,
  named: Record<string, { summary: string; value: unknown }>,
): Json {
  const examples: Json = { default: { summary: 'Example', value: exampleOf(route, 'request body', body) } };
  for (const [name, example] of Object.entries(named)) {
    const checked = body.safeParse(example.value);
    if (!checked.success)
      throw new Error(
        `${route.operationId}: the request body example ${name} does not validate: ${checked.error.message}`,
      );
    examples[name] = example;
  }
  return { [JSON_TYPE]: { schema: schemaOf(body, 'input'), examples } };
}

function successContent(route: DocumentedRoute, response: z.ZodType | undefined): Json | undefined {
  const type = route.doc.contentType ?? JSON_TYPE;
  if (response)
    return type === JSON_TYPE
      ? jsonContent(route, 'response', response, 'output')
      : { [type]: { schema: schemaOf(response, 'output') } };
  return type === JSON_TYPE ? undefined : { [type]: { schema: { type: 'string' } } };
}

function errorResponse(route: DocumentedRoute, status: number, codes: ErrorCode[]): Json {
  return {
    description: codes.map((c) => `\`${c}\`: ${ERROR_CODE_MEANINGS[c]}`).join('; '),
    headers: headersFor(route, status),
    content: {
      [JSON_TYPE]: {
        schema: ref('schemas', 'ErrorEnvelope'),
        examples: Object.fromEntries(
          codes.map((code) => [
            code,
            {
              value: {
                status: 'error',
                error: { code, message: ERROR_CODE_MEANINGS[code] },
                request_id: 'req_01J9ZQ4M8B0C',
              },
            },
          ]),
        ),
      },
    },
  };
}

function responsesFor(route: DocumentedRoute): Json {
  const { doc } = route;
  const responses: Json = {};
  const add = (status: number, response: Json) => {
    if (responses[String(status)]) throw new Error(`${route.operationId}: two answers for status ${status}`);
    responses[String(status)] = response;
  };
  const content = successContent(route, doc.response);
  add(doc.status, {
    description: doc.summary,
    headers: headersFor(route, doc.status),
    ...(content ? { content } : {}),
  });
  for (const alt of doc.alternatives ?? []) {
    add(alt.status, {
      description: alt.description,
      headers: headersFor(route, alt.status),
      content: jsonContent(route, `${alt.status} response`, alt.response, 'output'),
    });
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorsOf(route))
    byStatus.set(HTTP_STATUS[code], [...(byStatus.get(HTTP_STATUS[code]) ?? []), code]);
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b))
    add(status, errorResponse(route, status, codes));
  responses['default'] = errorResponse(route, 500, ['internal_error']);
  return responses;
}

function parametersFor(route: DocumentedRoute): Json[] {
  const names = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] as string);
  const described = route.doc.pathParams ?? {};
  const undescribed = names.filter((n) => !(n in described));
  const unknown = Object.keys(described).filter((n) => !names.includes(n));
  if (undescribed.length > 0 || unknown.length > 0) {
    throw new Error(`${route.operationId}: pathParams must describe exactly ${JSON.stringify(names)}`);
  }
  return [
    ...names.map((name) => ({
      name,
      in: 'path',
      required: true,
      description: described[name],
      schema: { type: 'string' },
    })),
    ...queryParameters(route),
    ...(route.doc.lookup ? [ref('parameters', 'Prefer'), ref('parameters', 'Idempotency-Key')] : []),
    ref('parameters', 'X-Request-Id'),
  ];
}

/** One `in: query` parameter per property of the handler's query schema, described by the schema itself. */
function queryParameters(route: DocumentedRoute): Json[] {
  const query = route.doc.query;
  if (!query) return [];
  const json = schemaOf(query, 'input');
  const required = new Set((json['required'] as string[] | undefined) ?? []);
  return Object.entries((json['properties'] as Record<string, Json> | undefined) ?? {}).map(([name, schema]) => {
    const { description, ...rest } = schema;
    if (typeof description !== 'string')
      throw new Error(`${route.operationId}: query parameter ${name} has no description`);
    return { name, in: 'query', required: required.has(name), description, schema: rest };
  });
}

/**
 * What the JSON body parser (http/json-body.ts) answers before any handler runs, on every route whose body
 * Fastify reads (`validation_error`: its answer to two Content-Type headers).
 */
const BODY_ERRORS: readonly ErrorCode[] = [
  'invalid_json',
  'validation_error',
  'unsupported_media_type',
  'payload_too_large',
];

/** The methods whose body Fastify reads (a GET's is ignored): the body parser answers on these routes. */
const BODY_METHODS: ReadonlySet<string> = new Set(['post', 'put', 'patch', 'delete']);

/**
 * Every error a route can answer: its handler's own (`errors`) and what the HTTP layer answers before any
 * handler runs, so that no route's list can leave a generated client without one of those.
 */
function errorsOf(route: DocumentedRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.doc.errors);
  const add = (...more: readonly ErrorCode[]) => more.forEach((code) => codes.add(code));
  // Any request: another method on this path (405, with Allow), headers or a body slower than the receive limits.
  add('method_not_allowed', 'request_timeout');
  if (BODY_METHODS.has(route.method)) add(...BODY_ERRORS);
  // A path segment that does not percent-decode, or is longer than any id, names nothing (error-envelope.ts).
  if (route.path.includes('/:')) add('not_found');
  // The key guard (401), and the rate limiter of every /v1 route (429; 503 when Redis cannot answer it).
  if (!route.isPublic) add('unauthorized');
  if (route.path.startsWith('/v1/')) add('rate_limited', 'unavailable');
  if (route.doc.body || route.doc.query) add('validation_error');
  return [...codes];
}

function operationFor(route: DocumentedRoute): Json {
  const { doc } = route;
  const body = doc.body;
  return {
    operationId: route.operationId,
    summary: doc.summary,
    description: doc.description ?? doc.summary,
    tags: [doc.tag],
    security: route.isPublic ? [] : [{ bearerAuth: [] }],
    parameters: parametersFor(route),
    ...(body
      ? {
          requestBody: {
            // The handlers treat a missing body as `{}`: it is optional exactly when `{}` is valid.
            required: !body.safeParse({}).success,
            content: doc.bodyExamples
              ? namedExamples(route, body, doc.bodyExamples)
              : jsonContent(route, 'request body', body, 'input'),
          },
        }
      : {}),
    responses: responsesFor(route),
  };
}

export interface DocumentInfo {
  version: string;
}

/** The OpenAPI 3.1 document for the given routes. Throws on anything it cannot describe faithfully. */
export function buildOpenApiDocument(routes: DocumentedRoute[], info: DocumentInfo): Json {
  const paths: Record<string, Json> = {};
  const operationIds = new Set<string>();
  for (const route of [...routes].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method))) {
    if (/[*()?]/.test(route.path)) throw new Error(`${route.operationId}: cannot document the pattern ${route.path}`);
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const item = (paths[path] ??= {});
    if (item[route.method]) throw new Error(`${route.method.toUpperCase()} ${path} is declared twice`);
    if (operationIds.has(route.operationId)) throw new Error(`operationId ${route.operationId} is used twice`);
    operationIds.add(route.operationId);
    item[route.method] = operationFor(route);
  }
  return {
    openapi: '3.1.1',
    info: {
      title: 'Dossier',
      version: info.version,
      description:
        'Self-hosted background-investigation API: people, companies, e-mail verification and phone lookups. ' +
        'Bodies are JSON in UTF-8 (`Content-Type: application/json`, at most 64 KiB, unknown fields rejected), sent as they are ' +
        'or with `Content-Encoding: gzip`, `deflate` or `br` (64 KiB once decoded); field names are snake_case; ' +
        'timestamps are RFC 3339 UTC. Every error is the ErrorEnvelope: match on `error.code`. ' +
        'A request the schemas refuse is refused; one they accept is refused only for the state of the account ' +
        '(401, 402, 404, 409, 429) or by a check no JSON Schema states, which the field names in its description ' +
        'and `x-server-check`. Lengths count UTF-16 code units, as JavaScript does: a character outside the ' +
        'Basic Multilingual Plane (most emoji) counts two.',
    },
    servers: [{ url: '/' }],
    tags: TAGS,
    paths,
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'dsk_…',
          description: 'An API key from register, login or POST /v1/auth/keys: `Authorization: Bearer dsk_…`',
        },
      },
      headers: HEADERS,
      parameters: PARAMETERS,
    },
  };
}
