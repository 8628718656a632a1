import fc from 'fast-check';
import {
  Api,
  OpenApiDocument,
  Stack,
  invalidRequestsOf,
  runCli,
  validRequestsOf,
  type ApiResponse,
  type DocumentedOperation,
  type GeneratedRequest,
  type Json,
  type KnownValues,
} from '@dossier/testing';

/**
 * The OpenAPI document drives a fuzz run against a real gateway and worker (ADR 0054): for every operation,
 * requests generated from its schemas with fast-check, valid ones and ones with one thing broken. Seeded, so
 * a run repeats (FUZZ_SEED picks another); a failure names the request.
 *
 * - No answer is a 5xx, and every answer is a status the operation documents, with a body its schema accepts.
 * - A valid request is accepted, or refused for the state of the account (a refusal of `STATE_REFUSALS`), or
 *   by a check no JSON Schema can state, which the document marks on the fields it names (`x-server-check`):
 *   a 400 naming only such fields. Those marks are exactly `SERVER_ONLY` (ADR 0069): a new one is a
 *   decision, made here, not a way for a check the document could state to slip by.
 * - An invalid one is refused with a 4xx, in the error envelope.
 */
const SEED = Number(process.env['FUZZ_SEED'] ?? 54);
const VALID_PER_OPERATION = 12;
const INVALID_PER_OPERATION = 12;
/** Requests of one operation in flight at once. */
const CONCURRENCY = 3;

/** Refusals a valid request may get for the state of the account or the server, not for what it says. */
const STATE_REFUSALS: Record<string, number> = {
  invalid_credentials: 401,
  insufficient_credits: 402,
  not_found: 404,
  email_taken: 409,
  idempotency_conflict: 409,
  rate_limited: 429,
};

/**
 * Every field the document marks `x-server-check`, by operation, and why JSON Schema cannot state its check.
 * The run prints how many valid requests each one refused.
 */
const SERVER_ONLY: Record<string, Record<string, string>> = {
  'POST /v1/auth/keys': { mode: 'the key the request is made with (a test key makes test keys only)' },
  'GET /v1/searches': {
    until: 'later than `since`: parameters are not compared',
    cursor: 'a `next_cursor` this server answered',
  },
  'POST /v1/search': {
    query: "checked as the field its `type` and shape pick: a phone's possibility among them",
    sites: "names on the workers' site list, read at run time",
    tags: "tags on the workers' site list, read at run time",
  },
  'POST /v1/search/person': {
    age_range: 'lower bound not above the upper: numbers are not compared',
    phone: "libphonenumber's possible lengths, in a region read from `country` or `location`",
    sites: "names on the workers' site list, read at run time",
    tags: "tags on the workers' site list, read at run time",
  },
  'POST /v1/verify/phone': { phone: "libphonenumber's possible lengths, in the region of `country`" },
  'POST /v1/webhooks': { url: "a host that resolves to an address webhooks may reach; the account's webhook limit" },
};

interface Tally {
  valid: Map<string, number>;
  invalid: Map<string, number>;
}

describe('the OpenAPI document drives a fuzz run against the real gateway and worker', () => {
  let stack: Stack;
  let api: Api;
  let doc: OpenApiDocument;
  let key: string;
  /** An account that only registers webhooks: no lookup of it ever makes an event to deliver. */
  let hookKey: string;
  /** Ids the server gave, by the path they name something under. */
  const known = new Map<string, Set<string>>();
  const tallies = new Map<string, Tally>();
  /** What went wrong, each with the operation and the kind of problem it is (counted in the summary). */
  const problems: { where: string; kind: string; text: string }[] = [];
  /** Valid requests refused by a server-only check, by operation and field (a request naming two counts for each). */
  const serverOnlyRefusals = new Map<string, number>();
  const refusedValid: GeneratedRequest[] = [];

  beforeAll(async () => {
    stack = await Stack.start({
      label: 'fuzz',
      env: {
        RATE_LIMIT_BURST: '1000000',
        RATE_LIMIT_RPS: '100000',
        LOGIN_FAILURE_LIMIT: '1000000/1s',
        // A lookup answers 202 after a second at most (an e-mail lookup whose DNS does not answer).
        SYNC_WAIT_DEFAULT_S: '1',
        SYNC_WAIT_MAX_S: '1',
        // Webhook hosts resolve on loopback, where nothing answers, and give up soon.
        WEBHOOK_DNS_SERVERS: '127.0.0.1:9',
        WEBHOOK_TIMEOUT_MS: '200',
      },
    });
    api = new Api(stack.baseUrl);
    doc = new OpenApiDocument((await api.get<Json>('/v1/openapi.json')).body);
    const account = await api.register();
    key = account.key;
    ({ key: hookKey } = await api.register());
    const granted = await runCli(['credits:grant', account.email, '100000']);
    expect(granted.code).toBe(0);
    // The reference page's assets, as it links them.
    const page = await api.request('GET', '/docs');
    known.set('/docs/assets/{file}', new Set([...page.text.matchAll(/assets\/([\w.-]+)/g)].map((m) => m[1]!)));
  });

  afterAll(async () => {
    await stack?.stop();
    const line = (counts: Map<string, number>) =>
      [...counts]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([outcome, n]) => `${outcome} ×${n}`)
        .join(', ');
    const total = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0);
    const rows = [...tallies].map(
      ([name, t]) =>
        `${name}\n    valid ${total(t.valid)}: ${line(t.valid)}\n    invalid ${total(t.invalid)}: ${line(t.invalid)}`,
    );
    const all = [...tallies.values()];
    const sum = (pick: (t: Tally) => Map<string, number>) => all.reduce((n, t) => n + total(pick(t)), 0);
    const kinds = new Map<string, number>();
    for (const p of problems) kinds.set(`${p.where}: ${p.kind}`, (kinds.get(`${p.where}: ${p.kind}`) ?? 0) + 1);
    const serverOnly = Object.entries(SERVER_ONLY).flatMap(([where, fields]) =>
      Object.entries(fields).map(
        ([field, why]) => `\n  ${where} ${field}: ${serverOnlyRefusals.get(`${where} ${field}`) ?? 0} (${why})`,
      ),
    );
    console.log(
      `OpenAPI fuzz (seed ${SEED}): ${all.length} operations, ${sum((t) => t.valid)} valid and ` +
        `${sum((t) => t.invalid)} invalid requests, ${problems.length} problems\n${rows.join('\n')}` +
        [...kinds].map(([kind, n]) => `\n  problem: ${kind} ×${n}`).join('') +
        `\nValid requests refused by a check only the server makes: ${refusedValid.length}; by field:` +
        serverOnly.join(''),
    );
  });

  /** The path an id from this answer names something under. */
  function remember(operation: DocumentedOperation, res: ApiResponse<Json>): void {
    const add = (path: string, id: unknown) => {
      if (typeof id === 'string') known.set(path, (known.get(path) ?? new Set()).add(id));
    };
    if (res.status >= 300 || !res.body) return;
    add('/v1/searches/{id}', res.body['search_id']);
    add('/v1/batches/{id}', res.body['batch_id']);
    if (operation.path === '/v1/auth/keys') add('/v1/auth/keys/{id}', res.body['key_id']);
    add('/v1/webhooks/{id}', res.body['webhook']?.['id']);
    add('/v1/webhooks/{id}/deliveries', res.body['webhook']?.['id']);
    add('/v1/searches?cursor', res.body['next_cursor']);
  }

  function knownFor(operation: DocumentedOperation): KnownValues {
    const values: KnownValues = {};
    const ids = known.get(operation.path);
    const name = operation.parameters.find((p) => p['in'] === 'path')?.['name'] as string | undefined;
    if (ids && name) values[name] = [...ids];
    const cursors = known.get(`${operation.path}?cursor`);
    if (cursors) values['cursor'] = [...cursors];
    return values;
  }

  async function send(operation: DocumentedOperation, request: GeneratedRequest): Promise<ApiResponse<Json>> {
    let path = operation.path.replace(/\{(\w+)\}/g, (_m, name: string) =>
      encodeURIComponent(request.pathParams[name] ?? ''),
    );
    if (request.query.length > 0) path += `?${new URLSearchParams(request.query).toString()}`;
    const account = operation.path.startsWith('/v1/webhooks') ? hookKey : key;
    const body = request.body;
    return api.request<Json>(request.method, path, {
      headers: request.headers,
      ...(request.auth ? { key: account } : {}),
      ...(body && 'json' in body ? { json: body.json } : {}),
      ...(body && 'raw' in body ? { raw: body.raw, contentType: body.contentType } : {}),
    });
  }

  /** Checks one answer; returns how it is counted (`200`, `400 validation_error`, …). */
  function check(operation: DocumentedOperation, request: GeneratedRequest, res: ApiResponse<Json>): string {
    const code = res.body?.['error']?.['code'] as string | undefined;
    const outcome = code ? `${res.status} ${code}` : String(res.status);
    const sent = JSON.stringify({ ...request, valid: undefined }).slice(0, 400);
    const where = `${operation.method.toUpperCase()} ${operation.path}`;
    const problem = (kind: string, detail = '') =>
      problems.push({
        where,
        kind,
        text: `${where} (${request.what}) -> ${outcome}: ${kind}${detail}\n  sent ${sent}\n  got ${res.text.slice(0, 300)}`,
      });
    if (res.status >= 500) problem('a 5xx');
    const answer = operation.op['responses'][String(res.status)] as Json | undefined;
    // A 405 belongs to another method on the path; its status is documented on each operation all the same.
    if (!answer) problem('status not documented', ` (${Object.keys(operation.op['responses']).join(', ')})`);
    const schema = answer?.['content']?.['application/json']?.['schema'] as Json | undefined;
    if (schema && res.body !== undefined && !doc.accepts(schema, res.body))
      problem(
        'body does not match the documented schema',
        `: ${JSON.stringify(doc.validator(schema).errors?.slice(0, 2))}`,
      );
    if (!request.valid) {
      if (res.status < 400 || res.status >= 500 || !code) problem('an invalid request was not refused with a 4xx');
      return outcome;
    }
    if (res.status < 300) return outcome;
    const hasPathId = operation.path.includes('{');
    if (code && STATE_REFUSALS[code] === res.status && (code !== 'not_found' || hasPathId)) return outcome;
    const checked = doc.serverChecked(operation);
    const fields = ((res.body?.['error']?.['details'] ?? []) as Json[]).map((d) => d['field'] as string);
    if (code === 'validation_error' && fields.length > 0 && fields.every((f) => checked.has(f))) {
      refusedValid.push(request);
      for (const field of new Set(fields))
        serverOnlyRefusals.set(`${where} ${field}`, (serverOnlyRefusals.get(`${where} ${field}`) ?? 0) + 1);
      return `${outcome} (${[...new Set(fields)].join(', ')})`;
    }
    problem('a valid request was refused', ` (fields marked x-server-check: ${[...checked].join(', ') || 'none'})`);
    return outcome;
  }

  async function run(operation: DocumentedOperation, requests: GeneratedRequest[], tally: Tally): Promise<void> {
    const queue = [...requests];
    const worker = async () => {
      for (let request = queue.shift(); request; request = queue.shift()) {
        const res = await send(operation, request);
        remember(operation, res);
        const outcome = check(operation, request, res);
        const counts = request.valid ? tally.valid : tally.invalid;
        counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  }

  it('marks exactly the fields of SERVER_ONLY x-server-check', () => {
    const marked = Object.fromEntries(
      doc.operations
        .map((op) => [`${op.method.toUpperCase()} ${op.path}`, [...doc.serverChecked(op)].sort()] as const)
        .filter(([, fields]) => fields.length > 0),
    );
    const expected = Object.fromEntries(
      Object.entries(SERVER_ONLY).map(([where, fields]) => [where, Object.keys(fields).sort()]),
    );
    expect(marked).toEqual(expected);
  });

  it('sends valid and invalid requests to every operation; each answer is one the document allows', async () => {
    // Requests that create come first, so that those naming what was created find it; deletions last.
    const order = ['post', 'get', 'delete'];
    const operations = [...doc.operations].sort(
      (a, b) => order.indexOf(a.method) - order.indexOf(b.method) || a.path.localeCompare(b.path),
    );
    for (const [index, operation] of operations.entries()) {
      const tally: Tally = { valid: new Map(), invalid: new Map() };
      tallies.set(`${operation.method.toUpperCase()} ${operation.path}`, tally);
      const seed = SEED + index;
      const valid = fc.sample(validRequestsOf(doc, operation, knownFor(operation)), {
        seed,
        numRuns: VALID_PER_OPERATION,
      });
      await run(operation, valid, tally);
      const invalid = fc.sample(invalidRequestsOf(doc, operation, knownFor(operation)), {
        seed,
        numRuns: INVALID_PER_OPERATION,
      });
      await run(operation, invalid, tally);
    }
    expect({ problems: problems.length, first: problems.slice(0, 10).map((p) => p.text) }).toEqual({
      problems: 0,
      first: [],
    });
    expect(tallies.size).toBe(doc.operations.length);
  });
});
