import type { ValidateFunction } from 'ajv/dist/2020';
import {
  Api,
  OpenApiDocument,
  Stack,
  queryValue,
  type ApiResponse,
  type Json,
  type RequestOptions,
} from '@dossier/testing';

/**
 * "Try it out" in /docs pre-fills every request with the document's examples: each one is sent to the
 * real gateway here and must pass validation (a 400 or 415 would be a broken example).
 */
describe('the OpenAPI examples work against the real gateway', () => {
  let stack: Stack;
  let api: Api;
  let doc: Json;
  let key: string;
  /** An account that runs no lookup: the webhook example's public URL must never get a delivery. */
  let hookKey: string;

  beforeAll(async () => {
    stack = await Stack.start({ label: 'examples' });
    api = new Api(stack.baseUrl);
    doc = (await api.get<Json>('/v1/openapi.json')).body;
    ({ key } = await api.register());
    ({ key: hookKey } = await api.register());
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const operations = (): [string, string, Json][] =>
    Object.entries(doc['paths'] as Json).flatMap(([path, item]) =>
      Object.entries(item as Json).map(([method, op]) => [method, path, op as Json] as [string, string, Json]),
    );

  it('gives every JSON request body and JSON success answer an example', () => {
    const missing: string[] = [];
    for (const [method, path, op] of operations()) {
      const body = op['requestBody']?.['content']?.['application/json'];
      if (body && body['example'] === undefined && body['examples']?.['default'] === undefined)
        missing.push(`${method} ${path} request body`);
      for (const [status, response] of Object.entries(op['responses'] as Json)) {
        const json = (response as Json)['content']?.['application/json'];
        if (Number(status) < 300 && json && json['example'] === undefined) missing.push(`${method} ${path} ${status}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('accepts every request body example (nothing answers 400 or 415)', async () => {
    const answers: [string, number, string][] = [];
    for (const [method, path, op] of operations()) {
      const json = op['requestBody']?.['content']?.['application/json'];
      // One `example`, or several named `examples` (the lookups' test-key inputs): each is sent.
      const examples: unknown[] =
        json?.['example'] !== undefined
          ? [json['example']]
          : Object.values((json?.['examples'] ?? {}) as Json).map((e) => (e as Json)['value']);
      if (path.includes('{')) continue;
      for (const example of examples) {
        const res = await api.request(method.toUpperCase(), path, {
          json: example,
          key: path === '/v1/webhooks' ? hookKey : key,
        });
        answers.push([`${method} ${path}`, res.status, (res.body as Json | undefined)?.['error']?.['code'] ?? '']);
      }
    }
    expect(answers.length).toBeGreaterThanOrEqual(8);
    // The register and login examples name an example account: taken, or not this run's password, is fine.
    const allowed = new Set(['', 'email_taken', 'invalid_credentials']);
    expect(answers.filter(([, status, code]) => status === 400 || status === 415 || !allowed.has(code))).toEqual([]);
  });
});

/**
 * A client generated from the document must be able to read every answer the gateway gives: each real
 * answer below, one or more per operation, must be a status the operation lists, in the media type it
 * lists, with a body its schema accepts and the headers that answer always carries.
 */
describe('every real answer is one the OpenAPI document describes', () => {
  let stack: Stack;
  let api: Api;
  let doc: Json;
  let validatorFor: (schema: Json) => ValidateFunction;
  const problems: string[] = [];
  const checked = new Set<string>();

  beforeAll(async () => {
    stack = await Stack.start({ label: 'answers', env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    api = new Api(stack.baseUrl);
    doc = (await api.get<Json>('/v1/openapi.json')).body;
    // `format` is checked too: a `date-time` the document promises is one the gateway takes.
    const document = new OpenApiDocument(doc);
    validatorFor = (schema) => document.validator(schema);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const mediaType = (type: string | null | undefined) => (type ?? '').split(';')[0]!.trim().toLowerCase();

  /**
   * A `400 validation_error` the request's documented schemas accept: a client generated from the document
   * would send that request and be refused. The query string is read against the `in: query` parameters
   * (an integer parameter's digits as a number) and the JSON body against the request body's schema.
   */
  function acceptedByDocument(op: Json, url: string, json: unknown): boolean {
    const query = new URLSearchParams(url.split('?')[1] ?? '');
    const parameters = ((op['parameters'] ?? []) as Json[]).filter((p) => p['in'] === 'query');
    for (const [name, raw] of query) {
      const schema = parameters.find((p) => p['name'] === name)?.['schema'] as Json | undefined;
      if (!schema) return false;
      if (!validatorFor(schema)(queryValue(schema, raw))) return false;
    }
    const body = op['requestBody']?.['content']?.['application/json']?.['schema'] as Json | undefined;
    return json === undefined || (body !== undefined && validatorFor(body)(json));
  }

  /**
   * Sends a request to `path` (with `{id}`-style placeholders filled from `params`) and checks the answer.
   * `semantic`: a `400` for a value no JSON Schema can tell apart (an unparseable phone number, a URL scheme
   * checked by the webhook rules); any other `400 validation_error` must be one the document's schemas predict.
   */
  async function send(
    method: string,
    path: string,
    options: RequestOptions & { params?: Record<string, string>; semantic?: true } = {},
  ): Promise<ApiResponse<Json>> {
    const url = path.replace(/\{(\w+)\}/g, (_m, name: string) => options.params?.[name] ?? 'none');
    const res = await api.request<Json>(method, url, options);
    const template = path.split('?')[0]!;
    const name = `${method} ${template}`;
    const where = `${name} -> ${res.status} ${res.body?.['error']?.['code'] ?? ''}`.trim();
    checked.add(name);
    const op = doc['paths'][template]?.[method.toLowerCase()] as Json | undefined;
    if (!op) {
      problems.push(`${where}: no such operation in the document`);
      return res;
    }
    const answer = op['responses'][String(res.status)] as Json | undefined;
    if (!answer) {
      problems.push(`${where}: status not in the document (${Object.keys(op['responses']).join(', ')})`);
      return res;
    }
    const [type, content] = (Object.entries(answer['content'] ?? {})[0] ?? []) as [string?, Json?];
    const actual = mediaType(res.headers.get('content-type'));
    if (type && type !== '*/*' && mediaType(type) !== actual) problems.push(`${where}: ${actual}, documented ${type}`);
    if (type === 'application/json' && content) {
      const validate = validatorFor(content['schema'] as Json);
      if (!validate(res.body))
        problems.push(`${where}: body does not match: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
    }
    if (res.status === 400 && res.body?.['error']?.['code'] === 'validation_error' && !options.semantic) {
      if (acceptedByDocument(op, path, options.json))
        problems.push(`${where}: the document's schemas accept this request (${path} ${JSON.stringify(options.json)})`);
    }
    // A success the document's schemas refuse: a client generated from it would not send this request at all.
    // (Not a batch: its item schema shows valid items only, and an invalid one is answered in its place.)
    const batched = Array.isArray((options.json as Json | undefined)?.['requests']);
    if (res.status < 300 && options.json !== undefined && !batched && !acceptedByDocument(op, path, options.json))
      problems.push(`${where}: the document's schemas refuse this request (${path} ${JSON.stringify(options.json)})`);
    // A client tells a 200 from a 202 by the body too: no other success answer's schema may accept this one.
    if (res.status < 300) {
      for (const [status, other] of Object.entries(op['responses'] as Json)) {
        const schema = (other as Json)['content']?.['application/json']?.['schema'] as Json | undefined;
        if (status !== String(res.status) && Number(status) < 300 && schema && validatorFor(schema)(res.body))
          problems.push(`${where}: the ${status} answer's schema accepts this ${res.status} body too`);
      }
    }
    // A batch answers a bad item with its error in its place: the document's item schema must refuse that item too.
    const requests = (options.json as Json | undefined)?.['requests'] as unknown[] | undefined;
    const itemSchema = op['requestBody']?.['content']?.['application/json']?.['schema']?.['properties']?.['requests']?.[
      'items'
    ] as Json | undefined;
    if (res.status < 300 && Array.isArray(res.body?.['items']) && requests && !options.semantic) {
      (res.body['items'] as Json[]).forEach((item, i) => {
        if (item['error']?.['code'] === 'validation_error' && validatorFor(itemSchema ?? {})(requests[i]))
          problems.push(`${where}: the document's item schema accepts requests[${i}] ${JSON.stringify(requests[i])}`);
      });
    }
    // Every header of the document's own list that the answer carries is one this answer documents.
    for (const header of Object.keys(doc['components']['headers'] as Json)) {
      if (res.headers.has(header) && !(header in (answer['headers'] ?? {})))
        problems.push(`${where}: ${header} is sent but not documented`);
    }
    const always = ['X-Request-Id'];
    if (url.startsWith('/v1/') && res.status < 300)
      always.push('RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset');
    if (res.status === 202) always.push('Location');
    for (const header of always) {
      if (!(header in (answer['headers'] ?? {}))) problems.push(`${where}: ${header} is not documented`);
      if (!res.headers.has(header)) problems.push(`${where}: ${header} is documented but missing`);
    }
    for (const header of ['X-Credits-Spent', 'X-Credits-Remaining']) {
      if (res.status < 300 && header in (answer['headers'] ?? {}) && !res.headers.has(header))
        problems.push(`${where}: ${header} is documented but missing`);
    }
    return res;
  }

  it('for each operation, its success and its error answers', async () => {
    const password = 'correct horse battery';
    const email = `answers-${Date.now().toString(36)}@example.com`;
    const tooLarge = { raw: JSON.stringify({ name: 'x'.repeat(70_000) }), contentType: 'application/json' };
    const notJson = { raw: '{"email":', contentType: 'application/json' };
    const textPlain = { raw: 'email=a', contentType: 'text/plain' };

    // Accounts and keys
    const registered = await send('POST', '/v1/auth/register', { json: { email, password } });
    const key = registered.body['api_key'] as string;
    await send('POST', '/v1/auth/register', { json: { email: email.toUpperCase(), password } });
    await send('POST', '/v1/auth/register', { json: { email: 'not an address', password: 'short' } });
    await send('POST', '/v1/auth/register', { json: { email: 'not an address', password } });
    await send('POST', '/v1/auth/register', notJson);
    await send('POST', '/v1/auth/register', textPlain);
    await send('POST', '/v1/auth/register', tooLarge);
    await send('POST', '/v1/auth/login', { json: { email, password } });
    await send('POST', '/v1/auth/login', { json: { email, password: 'not the password' } });
    await send('POST', '/v1/auth/login', { json: { email } });
    await send('POST', '/v1/auth/register', { json: { email: `other-${email}` } });
    await send('POST', '/v1/auth/login', notJson);
    await send('POST', '/v1/auth/login', textPlain);
    await send('POST', '/v1/auth/login', tooLarge);
    const created = await send('POST', '/v1/auth/keys', { key, json: { name: 'ci' } });
    await send('POST', '/v1/auth/keys', { key });
    await send('POST', '/v1/auth/keys', { key, json: { mode: 'production' } });
    await send('POST', '/v1/auth/keys', { key, json: {} });
    await send('POST', '/v1/auth/keys', { json: {} });
    await send('POST', '/v1/auth/keys', { key, ...notJson });
    await send('POST', '/v1/auth/keys', { key, ...textPlain });
    await send('POST', '/v1/auth/keys', { key, ...tooLarge });
    await send('GET', '/v1/auth/keys', { key });
    await send('GET', '/v1/auth/keys', { key: 'dsk_' + 'x'.repeat(40) });
    const keyId = created.body['key_id'] as string;
    await send('DELETE', '/v1/auth/keys/{id}', { key, params: { id: keyId } });
    await send('DELETE', '/v1/auth/keys/{id}', { key, params: { id: 'key_none' } });
    for (const body of [textPlain, notJson, tooLarge])
      await send('DELETE', '/v1/auth/keys/{id}', { key, params: { id: 'key_none' }, ...body });
    await send('GET', '/v1/account', { key });
    await send('GET', '/v1/account');

    // Lookups, their searches and the history
    const phone = await send('POST', '/v1/verify/phone', { key, json: { phone: '+14155552671' } });
    await send('POST', '/v1/verify/phone', { key, json: { phone: 'not a number' }, semantic: true });
    const pending = await send('POST', '/v1/verify/phone', {
      key,
      json: { phone: '+442071838750' },
      headers: { prefer: 'respond-async', 'idempotency-key': 'answers-1' },
    });
    await send('POST', '/v1/verify/phone', {
      key,
      json: { phone: '+14155552671' },
      headers: { 'idempotency-key': 'answers-1' },
    });
    await send('POST', '/v1/verify/phone', { key, ...textPlain });
    await send('POST', '/v1/verify/email', { key, json: { email: 'grace@example.com' } });
    await send('POST', '/v1/verify/email', { key, json: { email: '   ' } });
    await send('POST', '/v1/verify/phone', { key, json: { phone: ' +14155552671 '.padEnd(80, ' ') } });
    await send('POST', '/v1/verify/phone', { key, json: { phone: '4155552671', country: 'USA' } });
    await send('POST', '/v1/verify/phone', { key, json: { phone: '4155552671', country: ' us ' } });
    // Two letters, but no country: no pattern tells it from one.
    await send('POST', '/v1/verify/phone', { key, json: { phone: '4155552671', country: 'XX' }, semantic: true });
    await send('POST', '/v1/search', { key, json: { query: 'Grace Hopper', type: 'person' } });
    await send('POST', '/v1/search', { key, json: { query: 'gracehopper', type: 'username' } });
    await send('POST', '/v1/search', { key, json: { query: 'Grace Hopper', type: 'nobody' } });
    await send('POST', '/v1/search/person', { key, json: { name: 'Grace Hopper', age_range: '30-40' } });
    await send('POST', '/v1/search/company', { key, json: { company_name: 'Acme' } });
    await send('POST', '/v1/search/company', { key, json: {} });
    await send('POST', '/v1/search/company', { key, json: { country: 'GB' } });
    await send('POST', '/v1/search/person', { key, json: { location: 'Springfield, IL' } });
    await send('POST', '/v1/screen', { key, json: { name: 'Rustam Karimov', birth_year: 1961, country: 'UZ' } });
    await send('POST', '/v1/screen', { key, json: { name: 'Acme Trading', type: 'company' } });
    await send('POST', '/v1/screen', {
      key,
      json: { name: 'Acme Trading', type: 'company', birth_year: 1961 },
      semantic: true,
    });
    await send('POST', '/v1/screen', { key, json: {} });
    await send('GET', '/v1/searches/{id}', { key, params: { id: phone.body['search_id'] as string } });
    await send('GET', '/v1/searches/{id}', { key, params: { id: pending.body['search_id'] as string } });
    await send('GET', '/v1/searches/{id}', { key, params: { id: 'srch_none' } });
    await send('GET', '/v1/searches?limit=2', { key });
    await send('GET', '/v1/searches?limit=500', { key });
    await send('GET', '/v1/searches?since=yesterday', { key });
    await send('GET', '/v1/username/sites', { key });
    await send('GET', '/v1/username/sites');

    // Batches
    const item = { kind: 'phone', input: { phone: '+14155552671' } };
    const batch = await send('POST', '/v1/batch', {
      key,
      json: {
        requests: [
          item,
          { kind: 'email', input: {} },
          { kind: 'username', input: { username: 'grace_h' } },
          { kind: 'company', input: { country: 'GB' } },
          { input: { phone: '+14155552671' } },
        ],
      },
    });
    await send('POST', '/v1/batch', { key, json: { requests: [item] }, headers: { prefer: 'respond-async' } });
    await send('POST', '/v1/batch', { key, json: { requests: [] } });
    await send('GET', '/v1/batches/{id}', { key, params: { id: batch.body['batch_id'] as string } });
    await send('GET', '/v1/batches/{id}', { key, params: { id: 'bat_none' } });

    // Webhooks (a loopback address where nothing listens: this account's events go nowhere)
    const hook = await send('POST', '/v1/webhooks', { key, json: { url: 'http://127.0.0.1:9/hook' } });
    await send('POST', '/v1/webhooks', { key, json: { url: 'ftp://127.0.0.1/hook' } });
    await send('POST', '/v1/webhooks', { key, json: { url: 'not a url' } });
    await send('POST', '/v1/webhooks', { key, json: { url: 'https://127.0.0.1:9/hook#part' } });
    await send('GET', '/v1/webhooks', { key });
    const hookId = (hook.body['webhook'] as Json | undefined)?.['id'] as string;
    await send('GET', '/v1/webhooks/{id}/deliveries', { key, params: { id: hookId } });
    await send('DELETE', '/v1/webhooks/{id}', { key, params: { id: hookId } });
    await send('DELETE', '/v1/webhooks/{id}', { key, params: { id: hookId } });
    for (const body of [textPlain, notJson, tooLarge])
      await send('DELETE', '/v1/webhooks/{id}', { key, params: { id: hookId }, ...body });

    // Out of credits: a batch of 100 spends the rest of the grant, then a lookup is refused
    await send('POST', '/v1/batch', { key, json: { requests: Array.from({ length: 100 }, () => item) } });
    await send('POST', '/v1/verify/phone', { key, json: { phone: '+14155552671' } });

    // Operations
    await send('GET', '/v1/openapi.json');
    await send('GET', '/health/live');
    await send('GET', '/health/ready');
    await send('GET', '/metrics');
    await send('GET', '/docs');
    await send('GET', '/docs/assets/{file}', { params: { file: 'swagger-ui.css' } });
    await send('GET', '/docs/assets/{file}', { params: { file: 'none.js' } });

    expect(problems).toEqual([]);
    const operations = Object.entries(doc['paths'] as Json).flatMap(([path, item]) =>
      Object.keys(item as Json).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.filter((name) => !checked.has(name))).toEqual([]);
  });
});
