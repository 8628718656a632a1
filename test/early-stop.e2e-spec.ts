import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AppProcess,
  DIST,
  LOOPBACK_PROVIDER_ENV,
  TEST_WEBHOOK_SECRET_KEY,
  freePort,
  testEnv,
  uniquePrefix,
} from '@dossier/testing';

/**
 * Preloaded into an app (`node -r`): at the app's first require of @nestjs/core, the process sends itself
 * SIGTERM. That is a stop at a known moment of the ~0.5 s in which the modules load, before `main` runs,
 * as a supervisor's stop of a pod just started lands: no sleep decides when. (A signal sent at once after
 * spawn lands before Node runs any JavaScript at all, where no app can take it: Node's default ends it.)
 */
const STOP_WHILE_LOADING = `
const Module = require('node:module');
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === '@nestjs/core') {
    Module._load = load;
    process.kill(process.pid, 'SIGTERM');
  }
  return load.call(this, request, ...rest);
};
`;

describe('a stop while an app loads its modules (a pod scaled down as it starts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dossier-early-stop-'));
  const hook = join(dir, 'stop-while-loading.js');
  writeFileSync(hook, STOP_WHILE_LOADING);
  const started: AppProcess[] = [];

  afterAll(async () => {
    await Promise.all(started.map((app) => app.stop('SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['gateway', 'worker'] as const)(
    'the %s exits 0 on a SIGTERM before Nest is loaded, not by the signal',
    async (kind) => {
      const env = {
        DATABASE_URL: testEnv.databaseUrl,
        REDIS_URL: testEnv.redisUrl,
        QUEUE_PREFIX: uniquePrefix('early-stop'),
        WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY,
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
        ...LOOPBACK_PROVIDER_ENV,
        ...(kind === 'gateway'
          ? { PORT: String(await freePort()), METRICS_PORT: String(await freePort()), HOST: '127.0.0.1' }
          : { WORKER_HEALTH_PORT: String(await freePort()), WORKER_HEALTH_HOST: '127.0.0.1' }),
      };
      const app = AppProcess.start(kind, DIST[kind], env, { nodeArgs: ['-r', hook] });
      started.push(app);
      const code = await app.exited;
      // Before, Node's default for the signal ended the process by it (code null, SIGTERM): a supervisor
      // reads that as a crash, where a stop a moment later exits 0.
      expect({ code, signal: app.child.signalCode, logs: code === 0 ? '' : app.logs }).toEqual({
        code: 0,
        signal: null,
        logs: '',
      });
      expect(app.logs).toMatch(/stopped before it was up/);
    },
  );
});
