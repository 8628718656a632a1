import { Writable } from 'node:stream';
import { createRootLogger } from './logger';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, destination };
}

describe('createRootLogger', () => {
  it('writes JSON lines with a level label, an ISO time and the service', () => {
    const { lines, destination } = capture();
    createRootLogger('worker', 'info', { format: 'json', destination }).info({ queue: 'phone-lookup' }, 'job');
    expect(lines).toEqual([
      {
        level: 'info',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        service: 'worker',
        pid: process.pid,
        queue: 'phone-lookup',
        msg: 'job',
      },
    ]);
  });

  it('honours the level', () => {
    const { lines, destination } = capture();
    const logger = createRootLogger('gateway', 'warn', { format: 'json', destination });
    logger.info('dropped');
    logger.warn('kept');
    expect(lines.map((l) => l['msg'])).toEqual(['kept']);
  });

  it('redacts credentials, bodies and inputs wherever a line carries them', () => {
    const { lines, destination } = capture();
    createRootLogger('gateway', 'debug', { format: 'json', destination }).info({
      req: { method: 'POST', headers: { authorization: 'Bearer dsk_secret', cookie: 'sid=1', 'x-api-key': 'k' } },
      res: { headers: { 'set-cookie': 'sid=2' } },
      body: { email: 'a@b.example' },
      input: { phone: '+441234' },
      password: 'hunter2',
      job: { input: { name: 'Someone' }, password: 'p', api_key: 'dsk_x', webhook_secret: 'w' },
    });
    const text = JSON.stringify(lines);
    for (const secret of ['dsk_secret', 'sid=1', 'sid=2', 'a@b.example', '+441234', 'hunter2', 'Someone', 'dsk_x']) {
      expect(text).not.toContain(secret);
    }
    expect(lines[0]).toMatchObject({ req: { method: 'POST', headers: { authorization: '[redacted]' } } });
  });

  it('redacts every secret-bearing field name the API and its clients use, at the top and one level down', () => {
    // register/login's `password` and its alias `passwort`; a password change's `new_password`; the keys
    // register, login and POST /v1/auth/keys answer (`api_key`); POST /v1/webhooks' `secret`; tokens;
    // the Authorization header however it is spelt, and a proxy's.
    const names = ['password', 'passwort', 'new_password', 'api_key', 'secret', 'webhook_secret', 'token'];
    const { lines, destination } = capture();
    const logger = createRootLogger('gateway', 'debug', { format: 'json', destination });
    for (const name of names) logger.info({ [name]: `top-${name}`, job: { [name]: `nested-${name}` } });
    logger.info({
      req: { headers: { authorization: 'h-1', 'proxy-authorization': 'h-2', 'x-api-key': 'h-3' } },
      upstream: { Authorization: 'h-4', authorization: 'h-5' },
    });
    const text = JSON.stringify(lines);
    for (const name of names) {
      expect(text).not.toContain(`top-${name}`);
      expect(text).not.toContain(`nested-${name}`);
    }
    for (const value of ['h-1', 'h-2', 'h-3', 'h-4', 'h-5']) expect(text).not.toContain(value);
  });
});
