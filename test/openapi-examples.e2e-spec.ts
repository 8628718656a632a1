import { Api, Stack } from '@dossier/testing';

// The document is walked freely here; every shape that matters is asserted by expect().
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/**
 * "Try it out" in /docs pre-fills every request with the document's examples: each one is sent to the
 * real gateway here and must pass validation (a 400 or 415 would be a broken example).
 */
describe('the OpenAPI examples work against the real gateway', () => {
  let stack: Stack;
  let api: Api;
  let doc: Json;
  let key: string;

  beforeAll(async () => {
    stack = await Stack.start({ label: 'examples' });
    api = new Api(stack.baseUrl);
    doc = (await api.get<Json>('/v1/openapi.json')).body;
    ({ key } = await api.register());
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
        const res = await api.request(method.toUpperCase(), path, { json: example, key });
        answers.push([`${method} ${path}`, res.status, (res.body as Json | undefined)?.['error']?.['code'] ?? '']);
      }
    }
    expect(answers.length).toBeGreaterThanOrEqual(8);
    // The register and login examples name an example account: taken, or not this run's password, is fine.
    const allowed = new Set(['', 'email_taken', 'invalid_credentials']);
    expect(answers.filter(([, status, code]) => status === 400 || status === 415 || !allowed.has(code))).toEqual([]);
  });
});
