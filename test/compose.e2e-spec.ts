import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { LOOKUP_KINDS } from '@dossier/domain';
import { PROVIDERS, settingKeysOf } from '@dossier/providers';
import { loadGatewayConfig, loadWorkerConfig } from '@dossier/config';
import { APP_NODE_FLAGS, APP_PROCESS_ENV, appNodeFlags } from '@dossier/runtime';
import {
  Api,
  AppProcess,
  adminSql,
  LOOPBACK_PROVIDER_ENV,
  REPO_ROOT,
  appOf,
  dependenciesOf,
  dockerContextFiles,
  dockerfileEnv,
  dockerfileStages,
  durationMs,
  ENTRY_POINTS,
  envNamesOf,
  environmentOf,
  freePort,
  interpolate,
  publishedContainerPorts,
  readCompose,
  testEnv,
  uniquePrefix,
  waitFor,
  withDatabase,
  type ComposeFile,
  type ComposeService,
} from '@dossier/testing';

/**
 * docker-compose.yml and the Dockerfile, on a machine without a Docker engine: the compose file against
 * the Compose specification's schema (schema/compose-spec.json) and against the code (commands, variables,
 * ports, stop grace), the Docker build context built natively, and the same topology run natively — the
 * commands the compose services run, in their dependency order, against the real Redis and Postgres.
 */

const run = promisify(execFile);

/** The file as Compose sees it with nothing set in the shell: every `${VAR:-default}` at its default. */
const raw = readCompose();
const compose: ComposeFile = interpolate(raw);
const services = compose.services;
const named = (name: string): ComposeService => {
  const service = services[name];
  if (!service) throw new Error(`docker-compose.yml has no service ${name}`);
  return service;
};
const dossierServices = Object.keys(services).filter((s) => appOf(services[s]!.command) !== null);
const oneShot = (s: ComposeService) => s.restart === 'no';
const longRunning = dossierServices.filter((s) => !oneShot(named(s)));
const workerOf = (kind: string) => `worker-${kind}`;

/** The URL a `node -e "fetch('…')…"` health check asks. */
function healthUrl(service: ComposeService): URL {
  const test = service.healthcheck?.test;
  if (!Array.isArray(test) || test[0] !== 'CMD' || test[1] !== 'node' || test[2] !== '-e') {
    throw new Error(`not a node fetch health check: ${JSON.stringify(test)}`);
  }
  const url = /fetch\('([^']+)'\)/.exec(test[3]!)?.[1];
  if (!url) throw new Error(`no URL in ${test[3]}`);
  return new URL(url);
}

function schemaValidator() {
  const { $schema: _meta, ...schema } = JSON.parse(
    readFileSync(join(REPO_ROOT, 'schema/compose-spec.json'), 'utf8'),
  ) as {
    $schema: string;
  };
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  return ajv.compile(schema);
}

describe('docker-compose.yml against the Compose specification', () => {
  const validate = schemaValidator();
  const errors = (doc: unknown) =>
    validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);

  it('is checked against the vendored schema, unchanged from the commit schema/README.md names', () => {
    const recorded = /sha256\s*\|\s*`([0-9a-f]{64})`/.exec(
      readFileSync(join(REPO_ROOT, 'schema/README.md'), 'utf8'),
    )?.[1];
    const actual = createHash('sha256')
      .update(readFileSync(join(REPO_ROOT, 'schema/compose-spec.json')))
      .digest('hex');
    expect(actual).toBe(recorded);
  });

  it('is valid as written and once interpolated', () => {
    expect(errors(raw)).toEqual([]);
    expect(errors(compose)).toEqual([]);
    expect(compose.name).toBe('dossier'); // the top-level name needs Compose v2 (README)
  });

  it('rejects what the specification rejects (the check can fail)', () => {
    const broken = structuredClone(compose);
    broken.services['gateway']!['stop_grace'] = '75s';
    expect(errors(broken)).toEqual([expect.stringContaining('must NOT have additional properties')]);
    const badPolicy = structuredClone(compose);
    badPolicy.services['seed']!.pull_policy = 'sometimes';
    expect(errors(badPolicy).length).toBeGreaterThan(0);
  });
});

describe('docker-compose.yml against the code', () => {
  it('runs Redis with noeviction and AOF, and Postgres with a health check', () => {
    expect(named('redis').command).toEqual(['redis-server', '--maxmemory-policy', 'noeviction', '--appendonly', 'yes']);
    expect(named('redis').healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    expect(named('postgres').healthcheck?.test).toEqual(['CMD-SHELL', 'pg_isready -U postgres -d dossier']);
  });

  it('has a one-shot migrate and demo seed that gate the gateway and every worker', () => {
    expect(named('migrate').command).toEqual(['node', 'dist/apps/cli/src/main.js', 'db:migrate']);
    expect(named('seed').command).toEqual(['node', 'dist/apps/cli/src/main.js', 'demo:seed', '--if-absent']);
    for (const s of ['migrate', 'seed']) expect({ s, restart: named(s).restart }).toEqual({ s, restart: 'no' });
    expect(dependenciesOf(named('migrate'))).toEqual({ postgres: 'service_healthy' });
    expect(dependenciesOf(named('seed'))).toEqual({ migrate: 'service_completed_successfully' });
    expect(longRunning.sort()).toEqual(['gateway', ...LOOKUP_KINDS.map(workerOf)].sort());
    for (const s of longRunning) {
      expect({ s, deps: dependenciesOf(named(s)) }).toEqual({
        s,
        deps: expect.objectContaining({
          migrate: 'service_completed_successfully',
          seed: 'service_completed_successfully',
          redis: 'service_healthy',
        }),
      });
    }
  });

  it('runs commands that the build produces, with variables the apps read', () => {
    for (const s of dossierServices) {
      const service = named(s);
      const app = appOf(service.command)!;
      expect({ s, built: existsSync(join(REPO_ROOT, service.command![1]!)) }).toEqual({ s, built: true });
      const known = envNamesOf(app);
      expect({ s, unknown: Object.keys(environmentOf(service)).filter((k) => !known.has(k)) }).toEqual({
        s,
        unknown: [],
      });
    }
  });

  it('has one worker service per lookup kind, each with a health check on its WORKER_HEALTH_PORT', () => {
    for (const kind of LOOKUP_KINDS) {
      const service = named(workerOf(kind));
      expect(appOf(service.command)).toBe('worker');
      const config = loadWorkerConfig(environmentOf(service));
      expect({ kind, consumes: config.kinds }).toEqual({ kind, consumes: [kind] });
      const url = healthUrl(service);
      expect({ kind, port: Number(url.port), path: url.pathname }).toEqual({
        kind,
        port: config.healthPort,
        path: '/health/ready',
      });
      expect(publishedContainerPorts(service)).toEqual([]);
      // Active jobs get WORKER_SHUTDOWN_GRACE_MS to finish before Compose kills the container.
      expect(durationMs(service.stop_grace_period!)).toBeGreaterThan(config.shutdownGraceMs);
    }
  });

  it('lets the shell or .env switch on every provider that is off by default, in each worker service it serves', () => {
    // What docs/providers.md says to set (a key, SMTP_PROBE=true), as an operator's .env holds it.
    const shell = Object.fromEntries(PROVIDERS.flatMap(settingKeysOf).map((key) => [key, 'true']));
    const off = PROVIDERS.filter((p) => p.isConfigured({}) !== true);
    expect(off.length).toBeGreaterThan(0);
    for (const provider of off) {
      for (const kind of provider.kinds) {
        const env = environmentOf(interpolate(raw.services[workerOf(kind)]!, shell));
        expect({ provider: provider.id, kind, on: provider.isConfigured(env) }).toEqual({
          provider: provider.id,
          kind,
          on: true,
        });
      }
    }
  });

  it('publishes only the API port; metrics are on their own port, exposed but not published', () => {
    const gateway = named('gateway');
    const env = environmentOf(gateway);
    const config = loadGatewayConfig(env);
    expect(healthUrl(gateway).port).toBe(String(config.port));
    expect(publishedContainerPorts(gateway)).toEqual([config.port]);
    expect(gateway.ports).toEqual(['127.0.0.1:3000:3000']); // loopback unless GATEWAY_BIND says otherwise
    expect(interpolate(raw.services['gateway']!.ports, { GATEWAY_BIND: '0.0.0.0' })).toEqual(['0.0.0.0:3000:3000']);
    expect(env['METRICS_PORT']).toBeDefined();
    expect(Number(env['METRICS_PORT'])).not.toBe(config.port);
    expect(gateway.expose).toEqual([env['METRICS_PORT']]);
    for (const s of Object.keys(services).filter((n) => n !== 'gateway')) {
      expect({ s, published: publishedContainerPorts(named(s)) }).toEqual({ s, published: [] });
    }
  });

  it('gives the gateway a stop grace longer than the longest synchronous wait', () => {
    const config = loadGatewayConfig(environmentOf(named('gateway')));
    expect(durationMs(named('gateway').stop_grace_period!)).toBeGreaterThan(config.syncWaitMaxS * 1000);
  });

  it('builds one image, once: every Dossier service runs it, only migrate builds it', () => {
    const images = new Set(dossierServices.map((s) => named(s).image));
    expect(images.size).toBe(1);
    const builders = Object.keys(services).filter((s) => named(s).build !== undefined);
    expect(builders).toEqual(['migrate']);
    expect(named('migrate').pull_policy).toBe('build');
    // The others never build or pull it, and start only after migrate (so after its build).
    const after = (s: string, target: string): boolean =>
      Object.keys(dependenciesOf(named(s))).some((d) => d === target || after(d, target));
    for (const s of dossierServices.filter((n) => n !== 'migrate')) {
      expect({ s, pull: named(s).pull_policy, afterBuild: after(s, 'migrate') }).toEqual({
        s,
        pull: 'never',
        afterBuild: true,
      });
    }
  });
});

describe('the Dockerfile and its build context', () => {
  const context = dockerContextFiles();

  it('sends the sources and build configuration, and no tests, fixtures, docs, clients or deployment files', () => {
    for (const needed of [
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'nest-cli.json',
    ]) {
      expect(context).toContain(needed);
    }
    expect(context).toContain('apps/gateway/src/main.ts');
    expect(context).toContain('libs/providers/src/username/maigret/data.json');
    expect(context).toContain('libs/providers/src/username/sherlock/data.json');
    expect(context).toContain('libs/providers/src/username/site-meta/sites.json');
    const unwanted = context.filter(
      (f) =>
        /\.(spec|int-spec|e2e-spec|contract)\.ts$/.test(f) ||
        /(^|\/)fixtures\//.test(f) ||
        /^(test|bench|clients|docs|deploy|schema|scripts|\.ci|libs\/testing)\//.test(f) ||
        /^(README\.md|Dockerfile|docker-compose\.yml|\.env.*)$/.test(f),
    );
    expect(unwanted).toEqual([]);
  });

  it('has a build stage, a production-dependency stage and a slim runtime stage running as a non-root user', () => {
    const stages = dockerfileStages();
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const runtime = stages.at(-1)!;
    expect(runtime.from).toMatch(/-slim$/);
    const user = runtime.lines.filter((l) => /^USER\s/i.test(l)).at(-1);
    expect(user).toBeDefined();
    expect(user!.split(/\s+/)[1]).not.toMatch(/^(root|0)(:|$)/);
    // The runtime copies from other stages only, and its node_modules from a stage that installed without devDependencies.
    const copies = runtime.lines.filter((l) => /^COPY\s/i.test(l));
    expect(copies.every((l) => /--from=/.test(l))).toBe(true);
    const modules = copies.filter((l) => /\bnode_modules\b/.test(l));
    expect(modules).toHaveLength(1);
    const from = /--from=(\S+)/.exec(modules[0]!)![1];
    const deps = stages.find((s) => s.alias === from);
    expect(deps?.lines.some((l) => /npm ci\b.*--omit=dev/.test(l))).toBe(true);
    // Nothing is compiled or installed in the runtime stage itself.
    expect(runtime.lines.filter((l) => /^RUN\s/i.test(l))).toEqual([]);
  });

  it('runs the apps with the Node options and environment every launcher uses, for its Node (ADR 0029, ADR 0033)', () => {
    const runtime = dockerfileStages().at(-1)!;
    const nodeMajor = /^node:(\d+)-/.exec(runtime.from)?.[1];
    expect(nodeMajor).toBeDefined();
    const env = dockerfileEnv(runtime.lines);
    expect(env['NODE_OPTIONS']?.split(/\s+/)).toEqual(appNodeFlags(nodeMajor!));
    for (const [name, value] of Object.entries(APP_PROCESS_ENV))
      expect({ name, value: env[name] }).toEqual({ name, value });
  });

  it('has npm scripts that start the gateway and the worker the same way, an environment of their own winning', async () => {
    const { scripts } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const env = Object.entries(APP_PROCESS_ENV).map(([name, value]) => `${name}=\${${name}:-${value}}`);
    // The flags come from the build, for the `node` on the PATH (Node 24 refuses one of Node 22's).
    const flags = `$(node -p "require('./dist/libs/runtime/src/heap.js').APP_NODE_FLAGS.join(' ')")`;
    const dir = mkdtempSync(join(tmpdir(), 'dossier-scripts-'));
    try {
      const probe = join(dir, 'probe.js');
      writeFileSync(
        probe,
        `const names = ${JSON.stringify(Object.keys(APP_PROCESS_ENV))};
        const env = Object.fromEntries(names.map((name) => [name, process.env[name]]));
        process.stdout.write(JSON.stringify({ execArgv: process.execArgv, env, ppid: process.ppid }));`,
      );
      const ownEnv = Object.fromEntries(Object.keys(APP_PROCESS_ENV).map((name) => [name, `own-${name}`]));
      const path = `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`;
      for (const app of ['gateway', 'worker'] as const) {
        const script = scripts[`start:${app}`]!;
        // `exec`: the shell npm starts becomes node, so a process manager's SIGTERM reaches the app itself.
        expect(script).toBe([...env, 'exec', 'node', flags, ENTRY_POINTS[app]].join(' '));
        // What npm runs, with the entry point swapped for a probe: the flags the build gives this Node.
        const probed = ['-c', script.replace(ENTRY_POINTS[app], probe)];
        const ran = await run('sh', probed, { cwd: REPO_ROOT, env: { PATH: path } });
        // node's parent is this test process, which started `sh`: the shell replaced itself with node
        expect(JSON.parse(ran.stdout)).toEqual({ execArgv: APP_NODE_FLAGS, env: APP_PROCESS_ENV, ppid: process.pid });
        const own = await run('sh', probed, { cwd: REPO_ROOT, env: { PATH: path, ...ownEnv } });
        expect(JSON.parse(own.stdout)).toEqual({ execArgv: APP_NODE_FLAGS, env: ownEnv, ppid: process.pid });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('builds from that context alone into apps that need only production dependencies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dossier-image-'));
    try {
      for (const file of context) cpSync(join(REPO_ROOT, file), join(dir, file));
      symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
      const nest = join(REPO_ROOT, 'node_modules/@nestjs/cli/bin/nest.js');
      await run(process.execPath, [nest, 'build', 'gateway'], { cwd: dir, env: { PATH: process.env['PATH'] ?? '' } });
      const built = (readdirSync(join(dir, 'dist'), { recursive: true }) as string[]).map((f) =>
        f.split('\\').join('/'),
      );
      const entries = ['apps/gateway/src/main.js', 'apps/worker/src/main.js', 'apps/cli/src/main.js'];
      // and the username site list and its ranks and tags, which the provider reads from beside its compiled code
      const lists = [
        'libs/providers/src/username/maigret/data.json',
        'libs/providers/src/username/maigret/LICENSE',
        'libs/providers/src/username/sherlock/data.json',
        'libs/providers/src/username/site-meta/sites.json',
      ];
      for (const entry of [...entries, ...lists]) {
        expect(built).toContain(entry);
      }
      expect(built.filter((f) => /^(libs\/testing|bench|test)\/|\.spec\.js$|fixtures\//.test(f))).toEqual([]);
      // Every package the compiled code requires is a production dependency (or part of Node).
      const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      const required = new Set<string>();
      for (const f of built.filter((b) => b.endsWith('.js'))) {
        for (const m of readFileSync(join(dir, 'dist', f), 'utf8').matchAll(/require\("([^".][^"]*)"\)/g)) {
          const spec = m[1]!;
          required.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
        }
      }
      const builtin = new Set(builtinModules.flatMap((b) => [b, `node:${b}`]));
      expect([...required].filter((r) => !builtin.has(r) && !(r in pkg.dependencies))).toEqual([]);
      expect(required.size).toBeGreaterThan(10);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

/** The compose services' dependency order: waves of services whose dependencies all come earlier. */
function waves(): string[][] {
  const done = new Set<string>();
  const order: string[][] = [];
  while (done.size < Object.keys(services).length) {
    const wave = Object.keys(services).filter(
      (s) => !done.has(s) && Object.keys(dependenciesOf(named(s))).every((d) => done.has(d)),
    );
    if (wave.length === 0) throw new Error('docker-compose.yml has a dependency cycle');
    wave.forEach((s) => done.add(s));
    order.push(wave);
  }
  return order;
}

describe('the compose topology, run natively', () => {
  const database = `${new URL(testEnv.databaseUrl).pathname.slice(1)}_compose`;
  const databaseUrl = withDatabase(testEnv.baseDatabaseUrl, database);
  const prefix = uniquePrefix('compose');
  const running = new Map<string, { app: AppProcess; ports: Map<string, string> }>();

  /**
   * A service's compose environment on this machine: the redis and postgres host names become the real
   * servers (the run's own database), every `*PORT` a free port (remembered, for the health check), the
   * listen addresses loopback, the queue prefix this test's own; providers stay on loopback as in every test.
   */
  async function nativeEnv(
    service: ComposeService,
  ): Promise<{ env: Record<string, string>; ports: Map<string, string> }> {
    const env: Record<string, string> = {};
    const ports = new Map<string, string>();
    for (const [k, v] of Object.entries(environmentOf(service))) {
      if (/^[a-z]+:\/\//.test(v) && ['postgres', 'redis'].includes(new URL(v).hostname)) {
        env[k] = new URL(v).hostname === 'postgres' ? databaseUrl : testEnv.redisUrl;
      } else if (/PORT$/.test(k) && /^\d+$/.test(v)) {
        const port = String(await freePort());
        ports.set(v, port);
        env[k] = port;
      } else env[k] = v;
    }
    if (env['HOST']) env['HOST'] = '127.0.0.1';
    if (env['WORKER_HEALTH_PORT']) env['WORKER_HEALTH_HOST'] = '127.0.0.1';
    if (env['QUEUE_PREFIX']) env['QUEUE_PREFIX'] = prefix;
    return { env: { ...env, ...LOOPBACK_PROVIDER_ENV, DB_POOL_SIZE: '3' }, ports };
  }

  /** Runs a service's `node -e` health check with its container ports mapped to this machine's; true when it exits 0. */
  async function healthy(name: string): Promise<boolean> {
    const service = named(name);
    const { ports } = running.get(name)!;
    const test = service.healthcheck!.test as string[];
    const url = healthUrl(service);
    const mapped = ports.get(url.port);
    if (!mapped) throw new Error(`${name}: its health check asks port ${url.port}, which no *PORT variable sets`);
    const script = test[3]!.replace(`127.0.0.1:${url.port}/`, `127.0.0.1:${mapped}/`);
    const timeout = durationMs(service.healthcheck!.timeout ?? '30s');
    return run(process.execPath, ['-e', script], { timeout }).then(
      () => true,
      () => false,
    );
  }

  beforeAll(async () => {
    await adminSql(`CREATE DATABASE "${database}"`);
  });

  afterAll(async () => {
    await Promise.all([...running.values()].map((r) => r.app.stop('SIGKILL')));
    await adminSql(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  });

  it('migrates, seeds, starts the gateway and the four workers in compose order, all healthy, and answers each lookup kind', async () => {
    const order = waves();
    expect(order.map((w) => w.sort())).toEqual([
      ['postgres', 'redis'],
      ['migrate'],
      ['seed'],
      ['gateway', ...LOOKUP_KINDS.map(workerOf)].sort(),
    ]);
    for (const wave of order) {
      await Promise.all(
        wave.map(async (name) => {
          const service = named(name);
          if (appOf(service.command) === null) return; // redis, postgres: the machine's own servers
          const { env, ports } = await nativeEnv(service);
          const [, script, ...args] = service.command!;
          const app = AppProcess.start(name, script!, env, { args, cwd: REPO_ROOT, maxOutputChars: 100_000 });
          running.set(name, { app, ports });
          if (oneShot(service)) {
            const code = await app.exited;
            expect({ name, code, logs: code === 0 ? '' : app.logs }).toEqual({ name, code: 0, logs: '' });
            return;
          }
          const gone = new AbortController();
          void app.exited.then((code) => gone.abort(new Error(`${name} exited (${String(code)}):\n${app.logs}`)));
          const hc = service.healthcheck!;
          const budget = durationMs(hc.start_period ?? '0s') + (hc.retries ?? 3) * durationMs(hc.interval ?? '30s');
          await waitFor(() => healthy(name), Boolean, {
            timeoutMs: budget,
            what: `${name} healthy`,
            signal: gone.signal,
          });
        }),
      );
    }

    const gateway = running.get('gateway')!;
    const api = new Api(`http://127.0.0.1:${gateway.ports.get('3000')!}`);
    const { key } = await api.register();
    const lookups: [string, unknown, (body: { results: Record<string, unknown>[] }) => void][] = [
      [
        '/v1/verify/phone',
        { phone: '+1 650 253 0000' },
        (b) => expect(b.results[0]).toMatchObject({ e164: '+16502530000' }),
      ],
      [
        '/v1/verify/email',
        { email: 'gonzalo_halvorson@example.com' },
        (b) => expect(b.results[0]).toMatchObject({ email: 'gonzalo_halvorson@example.com' }),
      ],
      [
        '/v1/search/person',
        { name: 'Gonzalo Halvorson', location: 'South Jillville, NM' },
        (b) => expect(b.results[0]).toMatchObject({ full_name: 'Gonzalo Halvorson', sources: ['local'] }),
      ],
      [
        '/v1/search/company',
        { company_name: 'Balistreri Friesen and Franecki-Schroeder Ltd', country: 'GB' },
        (b) => expect(b.results[0]).toMatchObject({ registration_number: '05689105', sources: ['local'] }),
      ],
    ];
    for (const [path, body, check] of lookups) {
      const res = await api.post<{ status: string; results: Record<string, unknown>[] }>(path, body, { key });
      expect({ path, status: res.status, body: res.body.status }).toEqual({ path, status: 200, body: 'success' });
      check(res.body);
    }

    // docker compose stop: SIGTERM, then SIGKILL after the service's stop grace; each exits 0 within it.
    const stops = longRunning.map(async (name) => {
      const { app } = running.get(name)!;
      const code = await app.stop('SIGTERM', durationMs(named(name).stop_grace_period ?? '10s'));
      return { name, code, logs: code === 0 ? '' : app.logs };
    });
    expect(await Promise.all(stops)).toEqual(longRunning.map((name) => ({ name, code: 0, logs: '' })));
  }, 300_000);

  it('health checks fail while nothing answers (so the ones above passed for a reason)', async () => {
    const service = named('gateway');
    const port = String(await freePort());
    const script = (service.healthcheck!.test as string[])[3]!.replace(/127\.0\.0\.1:\d+\//, `127.0.0.1:${port}/`);
    await expect(run(process.execPath, ['-e', script])).rejects.toMatchObject({ code: 1 });
    expect(dirname(healthUrl(service).pathname)).toBe('/health');
  });
});
