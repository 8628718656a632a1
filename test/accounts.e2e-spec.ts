import { Redis } from 'ioredis';
import { Api, Stack, sql, testEnv } from '@dossier/testing';

describe('accounts and keys (gateway + worker processes, real Redis and Postgres)', () => {
  let stack: Stack;
  let api: Api;

  beforeAll(async () => {
    stack = await Stack.start({ label: 'accounts', env: { SIGNUP_CREDITS: '7' } });
    api = new Api(stack.baseUrl);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('registers with the signup grant, stores only hashes, and rejects a duplicate e-mail case-insensitively', async () => {
    const email = `Reg${Date.now()}@Example.com`;
    const res = await api.post<{
      status: string;
      account: { id: string; email: string; created_at: string };
      api_key: string;
      credits_remaining: number;
    }>('/v1/auth/register', { email, password: 'hunter2hunter2' });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('success');
    expect(res.body.account.email).toBe(email);
    expect(res.body.account.id).toMatch(/^acct_/);
    expect(new Date(res.body.account.created_at).toISOString()).toBe(res.body.account.created_at);
    expect(res.body.api_key).toMatch(/^dsk_[0-9A-Za-z]{32,}$/);
    expect(res.body.credits_remaining).toBe(7);

    const [account] = await sql<{ password_hash: string }>(`SELECT password_hash FROM accounts WHERE id = $1`, [
      res.body.account.id,
    ]);
    expect(account!.password_hash).toMatch(/^scrypt\$/);
    expect(account!.password_hash).not.toContain('hunter2hunter2');
    const keys = await sql<{ key_hash: string; prefix: string }>(
      `SELECT key_hash, prefix FROM api_keys WHERE account_id = $1`,
      [res.body.account.id],
    );
    expect(keys).toHaveLength(1);
    expect(keys[0]!.key_hash).not.toContain(res.body.api_key.slice(4));
    expect(res.body.api_key.startsWith(keys[0]!.prefix)).toBe(true);
    const ledger = await sql<{ phase: string; amount: string }>(
      `SELECT phase, amount FROM credit_ledger WHERE account_id = $1`,
      [res.body.account.id],
    );
    expect(ledger).toEqual([{ phase: 'grant', amount: '7' }]);

    const dup = await api.post('/v1/auth/register', { email: email.toUpperCase(), password: 'another-password' });
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ status: 'error', error: { code: 'email_taken' } });
  });

  it('lets exactly one of several registrations of one e-mail at once win, on two gateways: the others are 409 email_taken and leave nothing', async () => {
    const other = new Api((await stack.startGateway()).baseUrl);
    const email = `race${Date.now()}@example.com`;
    const variants = [email, email.toUpperCase(), email, `R${email.slice(1)}`];
    const answers = await Promise.all(
      variants.map((e, i) =>
        (i % 2 ? other : api).post<{ error?: { code: string } }>('/v1/auth/register', {
          email: e,
          password: 'correct horse battery',
        }),
      ),
    );
    const outcomes = answers.map((a) => (a.status === 201 ? 'created' : `${a.status} ${a.body.error?.code}`)).sort();
    expect(outcomes).toEqual(['409 email_taken', '409 email_taken', '409 email_taken', 'created']);
    const accounts = await sql<{ id: string }>(`SELECT id FROM accounts WHERE email_normalized = $1`, [email]);
    expect(accounts).toHaveLength(1);
    const id = accounts[0]!.id;
    expect(await sql(`SELECT 1 FROM api_keys WHERE account_id = $1`, [id])).toHaveLength(1);
    expect(await sql(`SELECT 1 FROM credit_ledger WHERE account_id = $1`, [id])).toHaveLength(1);
  });

  it('writes an account, its signup grant and its first key together: when the key cannot be written, nothing is, and a retry registers', async () => {
    const email = `keyless${Date.now()}@example.com`;
    // A real failure of the key's insert, for this e-mail only (other test files share the database).
    const fn = `refuse_key_${Date.now()}`;
    await sql(
      `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF EXISTS (SELECT 1 FROM accounts WHERE id = NEW.account_id AND email = '${email}') THEN
           RAISE EXCEPTION 'no key for this account (test)';
         END IF;
         RETURN NEW;
       END $$`,
    );
    await sql(`CREATE TRIGGER ${fn} BEFORE INSERT ON api_keys FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
    let refused;
    try {
      refused = await api.post('/v1/auth/register', { email, password: 'correct horse battery' });
    } finally {
      await sql(`DROP TRIGGER ${fn} ON api_keys`);
      await sql(`DROP FUNCTION ${fn}()`);
    }
    expect(refused.status).toBeGreaterThanOrEqual(500);
    expect(await sql(`SELECT 1 FROM accounts WHERE email_normalized = $1`, [email])).toHaveLength(0);
    expect(
      await sql(`SELECT 1 FROM credit_ledger l JOIN accounts a ON a.id = l.account_id WHERE a.email = $1`, [email]),
    ).toHaveLength(0);

    const retry = await api.post<{ account: { id: string } }>('/v1/auth/register', {
      email,
      password: 'correct horse battery',
    });
    expect(retry.status).toBe(201);
    expect(await sql(`SELECT 1 FROM api_keys WHERE account_id = $1`, [retry.body.account.id])).toHaveLength(1);
    expect(await sql(`SELECT 1 FROM credit_ledger WHERE account_id = $1`, [retry.body.account.id])).toHaveLength(1);
  });

  it('accepts the passwort alias and validates fields with details', async () => {
    const ok = await api.post('/v1/auth/register', {
      email: `alias${Date.now()}@example.com`,
      passwort: 'langes-passwort',
    });
    expect(ok.status).toBe(201);

    const bad = await api.post<{ error: { code: string; details: { field: string; issue: string }[] } }>(
      '/v1/auth/register',
      {
        email: 'not-an-email',
        password: 'short',
        extra: 1,
      },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_error');
    const fields = bad.body.error.details.map((d) => d.field).sort();
    expect(fields).toEqual(['email', 'extra', 'password']);

    const missing = await api.post<{ error: { details: { field: string; issue: string }[] } }>('/v1/auth/register', {
      email: 'x@example.com',
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toEqual([{ field: 'password', issue: 'is required' }]);
  });

  it('logs in with a new key, and answers the same for an unknown e-mail and a wrong password', async () => {
    const { email } = await api.register();
    const login = await api.post<{ api_key: string; key_id: string }>('/v1/auth/login', {
      email,
      password: 'correct horse battery',
    });
    expect(login.status).toBe(200);
    expect(login.body.api_key).toMatch(/^dsk_/);
    expect(login.body.key_id).toMatch(/^key_/);

    const wrong = await api.post('/v1/auth/login', { email, password: 'wrong password' });
    const unknown = await api.post('/v1/auth/login', {
      email: `nobody${Date.now()}@example.com`,
      password: 'wrong password',
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body['error']).toEqual(unknown.body['error']);
    expect((wrong.body['error'] as { code: string }).code).toBe('invalid_credentials');
  });

  it('takes a password typed with accents composed on one device and decomposed on another as the same (NFC, ADR 0043)', async () => {
    const email = `nfc${Date.now()}@example.com`;
    const composed = 'D\u00fcsseldorf caf\u00e9';
    const decomposed = composed.normalize('NFD');
    expect(decomposed).not.toBe(composed);
    expect((await api.post('/v1/auth/register', { email, password: composed })).status).toBe(201);
    expect((await api.post('/v1/auth/login', { email, password: decomposed })).status).toBe(200);
    expect((await api.post('/v1/auth/login', { email, passwort: composed })).status).toBe(200);
    // Both fields, the same password in two forms: they agree.
    expect((await api.post('/v1/auth/login', { email, password: composed, passwort: decomposed })).status).toBe(200);
    expect((await api.post('/v1/auth/login', { email, password: 'Dusseldorf cafe' })).status).toBe(401);
  });

  it('keeps an account’s 20 most recently used login keys: a login past that revokes the least recently used, on every gateway', async () => {
    const other = new Api((await stack.startGateway()).baseUrl);
    const { email, key, accountId } = await api.register();
    const named = await api.post<{ key_id: string }>('/v1/auth/keys', { name: 'login' }, { key });
    const logins: { api_key: string; key_id: string }[] = [];
    const login = async () => {
      const res = await api.post<{ status: string; api_key: string; key_id: string }>('/v1/auth/login', {
        email,
        password: 'correct horse battery',
      });
      expect(Object.keys(res.body).sort()).toEqual(['api_key', 'key_id', 'status']);
      logins.push(res.body);
    };
    for (let i = 0; i < 20; i++) await login();
    // The first login key is used (and cached) on the other gateway: the second is now the least recently used.
    expect((await other.get('/v1/account', { key: logins[0]!.api_key })).status).toBe(200);
    await sql(`UPDATE api_keys SET last_used_at = now() WHERE id = $1`, [logins[0]!.key_id]);
    await login();
    await login();

    const live = await sql<{ id: string }>(
      `SELECT id FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL ORDER BY id`,
      [accountId],
    );
    const revoked = logins.filter((l) => !live.some((k) => k.id === l.key_id)).map((l) => l.key_id);
    expect(revoked.sort()).toEqual([logins[1]!.key_id, logins[2]!.key_id].sort());
    // The register key and a key its owner named "login" are not login keys: they stay.
    expect(live.map((k) => k.id)).toEqual(expect.arrayContaining([named.body.key_id]));
    expect(live).toHaveLength(20 + 2);
    for (const gateway of [api, other]) {
      expect((await gateway.get('/v1/account', { key: logins[1]!.api_key })).status).toBe(401);
      expect((await gateway.get('/v1/account', { key: logins[0]!.api_key })).status).toBe(200);
      expect((await gateway.get('/v1/account', { key })).status).toBe(200);
    }
    const list = await api.get<{ keys: { id: string; revoked_at: string | null }[] }>('/v1/auth/keys', { key });
    expect(list.body.keys.find((k) => k.id === logins[1]!.key_id)?.revoked_at).not.toBeNull();
  });

  it('accepts the passwort alias at login as register does: the same password check, a conflict is a 400', async () => {
    const { email } = await api.register();
    const ok = await api.post<{ api_key: string; key_id: string }>('/v1/auth/login', {
      email,
      passwort: 'correct horse battery',
    });
    expect(ok.status).toBe(200);
    expect(ok.body.key_id).toMatch(/^key_/);
    expect((await api.get('/v1/account', { key: ok.body.api_key })).status).toBe(200);

    const wrong = await api.post('/v1/auth/login', { email, passwort: 'wrong password' });
    const wrongPassword = await api.post('/v1/auth/login', { email, password: 'wrong password' });
    expect(wrong.status).toBe(401);
    expect(wrong.body['error']).toEqual(wrongPassword.body['error']);

    const same = await api.post('/v1/auth/login', {
      email,
      password: 'correct horse battery',
      passwort: 'correct horse battery',
    });
    expect(same.status).toBe(200);

    const conflict = { issue: 'differs from password; send only one of them', field: 'passwort' };
    for (const path of ['/v1/auth/login', '/v1/auth/register']) {
      const differ = await api.post<{ error: { code: string; details: { field: string; issue: string }[] } }>(path, {
        email: path.endsWith('login') ? email : `alias${Date.now()}@example.com`,
        password: 'correct horse battery',
        passwort: 'correct horse battery!',
      });
      expect({ path, status: differ.status, code: differ.body.error.code, details: differ.body.error.details }).toEqual(
        { path, status: 400, code: 'validation_error', details: [conflict] },
      );
    }

    const missing = await api.post<{ error: { details: { field: string; issue: string }[] } }>('/v1/auth/login', {
      email,
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toEqual([{ field: 'password', issue: 'is required' }]);
  });

  it('creates, lists and revokes keys; a revoked key is refused from the next request on', async () => {
    const { key } = await api.register();
    const created = await api.post<{ api_key: string; key_id: string }>('/v1/auth/keys', { name: 'ci' }, { key });
    expect(created.status).toBe(201);
    const noBody = await api.request('POST', '/v1/auth/keys', { key });
    expect(noBody.status).toBe(201);

    const list = await api.get<{
      keys: {
        id: string;
        prefix: string;
        name: string | null;
        created_at: string;
        last_used_at: string | null;
        revoked_at: string | null;
      }[];
    }>('/v1/auth/keys', { key });
    expect(list.status).toBe(200);
    expect(list.body.keys).toHaveLength(3);
    const ci = list.body.keys.find((k) => k.id === created.body.key_id)!;
    expect(ci).toMatchObject({ name: 'ci', revoked_at: null });
    expect(created.body.api_key.startsWith(ci.prefix)).toBe(true);
    expect(JSON.stringify(list.body)).not.toContain(created.body.api_key);

    expect((await api.get('/v1/account', { key: created.body.api_key })).status).toBe(200);
    const revoked = await api.request('DELETE', `/v1/auth/keys/${created.body.key_id}`, { key });
    expect(revoked.status).toBe(200);
    const after = await api.get('/v1/account', { key: created.body.api_key });
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(after.body).toMatchObject({ status: 'error', error: { code: 'unauthorized' } });

    const other = await api.register();
    const foreign = await api.request('DELETE', `/v1/auth/keys/${created.body.key_id}`, { key: other.key });
    expect(foreign.status).toBe(404);
  });

  it('lists every live key but only the 100 most recently revoked ones; an unlisted revoked key is still the account’s', async () => {
    const { key, accountId } = await api.register();
    const named = await api.post<{ key_id: string }>('/v1/auth/keys', { name: 'kept' }, { key });
    const test = await api.post<{ api_key: string; key_id: string }>('/v1/auth/keys', { mode: 'test' }, { key });
    // 130 revoked keys (as a client logging in on every start leaves, ADR 0036): key_r000 the latest revoked.
    await sql(
      `INSERT INTO api_keys (id, account_id, prefix, key_hash, name, mode, issued_by_login, created_at, revoked_at)
       SELECT 'key_r' || lpad(i::text, 3, '0') || $2, $1, 'dsk_Rvkd', md5(random()::text || i) || md5($2 || i), 'login',
              CASE WHEN i % 10 = 0 THEN 'test' ELSE 'live' END, true,
              now() - interval '1 day' + i * interval '1 second', now() - i * interval '1 second'
         FROM generate_series(0, 129) AS i`,
      [accountId, String(Date.now())],
    );
    const revokedIds = (
      await sql<{ id: string }>(
        `SELECT id FROM api_keys WHERE account_id = $1 AND revoked_at IS NOT NULL ORDER BY revoked_at DESC`,
        [accountId],
      )
    ).map((k) => k.id);
    type Listed = { keys: { id: string; mode: string; created_at: string; revoked_at: string | null }[] };
    const list = await api.get<Listed>('/v1/auth/keys', { key });
    expect(list.status).toBe(200);
    const live = list.body.keys.filter((k) => k.revoked_at === null).map((k) => k.id);
    expect(live.sort()).toEqual(
      (await sql<{ id: string }>(`SELECT id FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL`, [accountId]))
        .map((k) => k.id)
        .sort(),
    );
    expect(live).toEqual(expect.arrayContaining([named.body.key_id, test.body.key_id]));
    const revoked = list.body.keys.filter((k) => k.revoked_at !== null).map((k) => k.id);
    expect(revoked.sort()).toEqual(revokedIds.slice(0, 100).sort());
    // Oldest first, as before.
    const created = list.body.keys.map((k) => k.created_at);
    expect(created).toEqual([...created].sort());

    // A test key sees only test keys, and of them too only the 100 most recently revoked (13 here).
    const testList = await api.get<Listed>('/v1/auth/keys', { key: test.body.api_key });
    expect(testList.body.keys.every((k) => k.mode === 'test')).toBe(true);
    expect(testList.body.keys.filter((k) => k.revoked_at !== null)).toHaveLength(13);

    // A revoked key past the list is still one of the account's: revoking it again answers it, unchanged.
    const oldest = revokedIds[revokedIds.length - 1]!;
    const again = await api.request<{ key: { id: string; revoked_at: string } }>('DELETE', `/v1/auth/keys/${oldest}`, {
      key,
    });
    expect(again.status).toBe(200);
    expect(again.body.key.id).toBe(oldest);
    const stranger = await api.register();
    expect((await api.request('DELETE', `/v1/auth/keys/${oldest}`, { key: stranger.key })).status).toBe(404);
  });

  it('refuses a key name with control characters, naming the field, and documents the name’s rules', async () => {
    const { key, accountId } = await api.register();
    const bad = [
      'ci\u0000',
      'ci\nprod',
      'line\r\n',
      '\u001b[31mred\u001b[0m',
      'tab\tbed',
      'del\u007f',
      'c1\u0085',
      'bidi\u202e',
    ];
    const answers = [];
    for (const name of bad) {
      const res = await api.post<{ error: { code: string; details: { field: string }[] } }>(
        '/v1/auth/keys',
        { name },
        { key },
      );
      answers.push({ name, status: res.status, code: res.body.error?.code, fields: res.body.error?.details });
    }
    expect(answers).toEqual(
      bad.map((name) => ({
        name,
        status: 400,
        code: 'validation_error',
        fields: [expect.objectContaining({ field: 'name' })],
      })),
    );
    // None was created; a name of 100 characters once trimmed, padded or not, is fine; 101 is not.
    expect(await sql('SELECT id FROM api_keys WHERE account_id = $1', [accountId])).toHaveLength(1);
    expect((await api.post('/v1/auth/keys', { name: `  ${'n'.repeat(100)}  ` }, { key })).status).toBe(201);
    expect((await api.post('/v1/auth/keys', { name: 'n'.repeat(101) }, { key })).status).toBe(400);

    const doc = await api.get<Record<string, any>>('/v1/openapi.json'); // eslint-disable-line @typescript-eslint/no-explicit-any
    const name = doc.body['paths']['/v1/auth/keys']['post']['requestBody']['content']['application/json']['schema'][
      'properties'
    ]['name'] as { maxLength?: number; allOf: { pattern: string }[] };
    expect(name).not.toHaveProperty('maxLength');
    const patterns = name.allOf.map((p) => new RegExp(p.pattern, 'u'));
    const documented = (v: string) => patterns.every((p) => p.test(v));
    expect(bad.map(documented)).toEqual(bad.map(() => false));
    expect([`  ${'n'.repeat(100)}  `, 'ci key', 'ci \u{1F600}'].map(documented)).toEqual([true, true, true]);
    expect(['n'.repeat(101), '   '].map(documented)).toEqual([false, false]);
  });

  it('refuses a revoked key at once on every gateway, including one that has the key cached', async () => {
    const other = new Api((await stack.startGateway()).baseUrl);
    const { key } = await api.register();
    const created = await api.post<{ api_key: string; key_id: string }>('/v1/auth/keys', { name: 'shared' }, { key });
    // both gateways have now authenticated (and cached) the new key
    expect((await api.get('/v1/account', { key: created.body.api_key })).status).toBe(200);
    expect((await other.get('/v1/account', { key: created.body.api_key })).status).toBe(200);

    expect((await api.request('DELETE', `/v1/auth/keys/${created.body.key_id}`, { key })).status).toBe(200);
    const onOther = await other.get('/v1/account', { key: created.body.api_key });
    expect(onOther.status).toBe(401);
    expect(onOther.body).toMatchObject({ error: { code: 'unauthorized' } });
    expect(
      (await other.post('/v1/verify/phone', { phone: '+14155552671' }, { key: created.body.api_key })).status,
    ).toBe(401);
    // the key that did the revoking still works on both
    expect((await other.get('/v1/account', { key })).status).toBe(200);

    // a key of another account cannot be revoked (nor marked revoked) by this one
    const stranger = await api.register();
    expect((await other.request('DELETE', `/v1/auth/keys/${created.body.key_id}`, { key: stranger.key })).status).toBe(
      404,
    );
    const strangersKeys = await api.get<{ keys: { id: string }[] }>('/v1/auth/keys', { key: stranger.key });
    const strangerKeyId = strangersKeys.body.keys[0]!.id;
    expect((await api.request('DELETE', `/v1/auth/keys/${strangerKeyId}`, { key })).status).toBe(404);
    expect((await other.get('/v1/account', { key: stranger.key })).status).toBe(200);
  });

  it('reports the account and balance', async () => {
    const { key, email, accountId } = await api.register();
    const res = await api.get<{ account: { id: string; email: string }; credits_remaining: number }>('/v1/account', {
      key,
    });
    expect(res.status).toBe(200);
    expect(res.body.account).toMatchObject({ id: accountId, email });
    expect(res.body.credits_remaining).toBe(7);
  });

  it('answers an unknown key 401 every time, and a key issued after that works at once on every gateway', async () => {
    const other = new Api((await stack.startGateway()).baseUrl);
    const unknown = `dsk_${'B'.repeat(40)}`;
    for (const gateway of [api, other, api, other])
      expect((await gateway.get('/v1/account', { key: unknown })).status).toBe(401);
    const { key } = await api.register();
    const created = await other.post<{ api_key: string }>('/v1/auth/keys', { name: 'fresh' }, { key });
    const login = await api.post<{ api_key: string }>('/v1/auth/login', {
      email: (await api.get<{ account: { email: string } }>('/v1/account', { key })).body.account.email,
      password: 'correct horse battery',
    });
    for (const fresh of [created.body.api_key, login.body.api_key])
      for (const gateway of [api, other]) expect((await gateway.get('/v1/account', { key: fresh })).status).toBe(200);
  });

  it.each([
    ['no header', {}],
    ['wrong scheme', { authorization: 'Basic abc' }],
    ['malformed key', { authorization: 'Bearer nope' }],
    ['unknown key', { authorization: `Bearer dsk_${'A'.repeat(40)}` }],
  ])('refuses %s with 401 unauthorized', async (_label, headers) => {
    const res = await api.get('/v1/account', { headers });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(res.body).toMatchObject({ status: 'error', error: { code: 'unauthorized' } });
  });

  it('answers a burst of registers and logins beyond the password-hashing line with 503 unavailable and Retry-After, creating nothing for them', async () => {
    const busy = new Api(
      (await stack.startGateway({ PASSWORD_HASH_CONCURRENCY: '1', PASSWORD_HASH_MAX_WAITING: '1' })).baseUrl,
    );
    const tag = `burst${Date.now()}`;
    const emails = Array.from({ length: 8 }, (_, i) => `${tag}-${i}@example.com`);
    const password = 'correct horse battery';
    const registers = await Promise.all(emails.map((email) => busy.post('/v1/auth/register', { email, password })));
    const statuses = registers.map((r) => r.status);
    expect(statuses.filter((s) => s !== 201 && s !== 503)).toEqual([]);
    expect(statuses).toContain(201);
    expect(statuses).toContain(503);
    for (const refused of registers.filter((r) => r.status === 503)) {
      expect(refused.body).toMatchObject({ status: 'error', error: { code: 'unavailable' } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    const created = await sql<{ email: string }>(`SELECT email FROM accounts WHERE email LIKE $1 ORDER BY email`, [
      `${tag}-%`,
    ]);
    expect(created.map((a) => a.email)).toEqual(emails.filter((_, i) => registers[i]!.status === 201));

    const known = created[0]!.email;
    const logins = await Promise.all(emails.map(() => busy.post('/v1/auth/login', { email: known, password })));
    const loginStatuses = logins.map((r) => r.status);
    expect(loginStatuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(loginStatuses).toContain(503);
    // Once the burst is over, the gateway answers again.
    expect((await busy.post('/v1/auth/login', { email: known, password })).status).toBe(200);
  });

  describe('failed logins (LOGIN_FAILURE_LIMIT=3/10m on a gateway of its own)', () => {
    let limited: Api;
    const password = 'correct horse battery';
    const register = async (): Promise<string> => {
      const email = `guess${Date.now()}${Math.random().toString(36).slice(2, 8)}@example.com`;
      expect((await api.post('/v1/auth/register', { email, password })).status).toBe(201);
      return email;
    };

    beforeAll(async () => {
      limited = new Api((await stack.startGateway({ LOGIN_FAILURE_LIMIT: '3/10m' })).baseUrl);
    });

    it('answers 429 with Retry-After once an account has had 3 wrong passwords, even to the right one; right ones never count', async () => {
      const email = await register();
      // Successes give their token back: many in a row are all answered.
      for (let i = 0; i < 5; i++) expect((await limited.post('/v1/auth/login', { email, password })).status).toBe(200);
      for (let i = 0; i < 3; i++) {
        const wrong = await limited.post('/v1/auth/login', { email, password: 'wrong password' });
        expect(wrong.body).toMatchObject({ status: 'error', error: { code: 'invalid_credentials' } });
      }
      const keysBefore = await sql(
        `SELECT 1 FROM api_keys a JOIN accounts c ON c.id = a.account_id WHERE c.email = $1`,
        [email],
      );
      for (const body of [
        { email, password: 'wrong password' },
        { email, password },
        { email: email.toUpperCase(), password },
      ]) {
        const res = await limited.post('/v1/auth/login', body);
        expect({ status: res.status, body: res.body }).toMatchObject({
          status: 429,
          body: { status: 'error', error: { code: 'rate_limited' } },
        });
        // One token back every 200 s (3 per 10 min).
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(150);
        expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(200);
      }
      // No key was issued while refused.
      const keysAfter = await sql(
        `SELECT 1 FROM api_keys a JOIN accounts c ON c.id = a.account_id WHERE c.email = $1`,
        [email],
      );
      expect(keysAfter).toHaveLength(keysBefore.length);
      // Another account, and the same address, are not affected.
      expect((await limited.post('/v1/auth/login', { email: await register(), password })).status).toBe(200);
    });

    it('limits an unknown e-mail the same way, and keeps no e-mail address in Redis', async () => {
      const email = `nobody${Date.now()}@example.com`;
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await limited.post('/v1/auth/login', { email, password })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      const redis = new Redis(testEnv.redisUrl);
      try {
        const keys = await redis.keys(`${stack.env['QUEUE_PREFIX']!}:ratelimit:login:*`);
        expect(keys.length).toBeGreaterThan(0);
        expect(keys.join(' ')).not.toMatch(/@|nobody|guess/);
      } finally {
        redis.disconnect();
      }
    });

    it('lets exactly 3 of 10 parallel wrong guesses be checked: the rest are 429 before any password is hashed', async () => {
      const email = await register();
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => limited.post('/v1/auth/login', { email, password: 'wrong password' })),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).toEqual([401, 401, 401, 429, 429, 429, 429, 429, 429, 429]);
    });
  });
});
