#!/usr/bin/env node
/**
 * `npm start`: the whole service on one machine with Redis and Postgres but no Docker.
 *
 *   1. builds when dist/ is missing or a source or build config file is newer than the last build;
 *   2. creates the database named by DATABASE_URL when it does not exist (through the server's
 *      `postgres` maintenance database) and migrates it with the compiled CLI (`db:migrate`);
 *   3. starts the gateway and one worker consuming every lookup kind as child processes (with the Node
 *      options and environment every launcher uses, ADR 0029), waits for both health checks and prints
 *      the URL of /docs;
 *   4. on SIGINT (Ctrl-C) or SIGTERM sends SIGTERM to both, waits for them and exits 0; when a child
 *      dies on its own, stops the other and exits non-zero with the dead child's last output.
 *
 * Plain Node (built-ins and `pg`), so it runs before anything is compiled. Every variable passes
 * through to the apps, whose defaults it shares (an empty value counts as unset, as in the apps).
 * The children run in their own process group: a terminal's Ctrl-C reaches only this script, which
 * then stops each child exactly once (a second signal would cut a worker's graceful shutdown short).
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = {
  gateway: join(ROOT, 'dist/apps/gateway/src/main.js'),
  worker: join(ROOT, 'dist/apps/worker/src/main.js'),
  cli: join(ROOT, 'dist/apps/cli/src/main.js'),
};
/** What a build reads besides apps/ and libs/. */
const BUILD_CONFIG = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json'];
const TEST_FILE = /\.(spec|int-spec|e2e-spec)\.ts$/;
const READY_TIMEOUT_MS = 60_000;
const LAST_LINES = 40;

const setting = (name, fallback) => process.env[name] || fallback;
const DATABASE_URL = setting('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/dossier');
const REDIS_URL = setting('REDIS_URL', 'redis://127.0.0.1:6379');
/** With a cluster, the apps connect to its nodes (REDIS_CLUSTER_NODES), and REDIS_URL's host is unused. */
const REDIS_CLUSTER_NODES = setting('REDIS_CLUSTER_NODES', '').trim();

const say = (message) => console.log(`dossier: ${message}`);
class StartError extends Error {}

/** The one child of the preparation steps (build, migrate) running now, and the long-lived apps. */
let step = null;
const apps = [];
let stopping = false;
let firstSignalAt = 0;

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => onSignal(signal));

main().catch((err) => {
  console.error(`dossier: ${err instanceof StartError ? err.message : (err?.stack ?? err)}`);
  void stopApps().then(() => process.exit(1));
});

async function main() {
  const stale = buildReason();
  if (stale) {
    say(`building (${stale})`);
    await runStep('build', npmCommand(['run', 'build']));
  }
  if (stopping) return;
  await checkRedis();
  await ensureDatabase();
  await runStep('db:migrate', [process.execPath, DIST.cli, 'db:migrate']);
  if (stopping) return;

  // The demo set, once: `demo:seed --if-absent` does nothing when it is there (re-running it would change
  // nothing either, but costs a few seconds at every start).
  await runStep('demo:seed', [process.execPath, DIST.cli, 'demo:seed', '--if-absent']);
  if (stopping) return;

  const port = setting('PORT', '3000') === '0' ? String(await freePort()) : setting('PORT', '3000');
  // Loopback unless told otherwise (HOST), and /metrics (unauthenticated) on a loopback port of its own rather
  // than on the API's port, unless METRICS_PORT / METRICS_HOST say otherwise.
  const host = setting('HOST', '127.0.0.1');
  const gatewayHost = probeHost(host);
  const metricsPort = setting('METRICS_PORT', '0') === '0' ? String(await freePort()) : process.env.METRICS_PORT;
  const metricsHost = setting('METRICS_HOST', '127.0.0.1');
  const healthPort =
    setting('WORKER_HEALTH_PORT', '0') === '0' ? String(await freePort()) : process.env.WORKER_HEALTH_PORT;
  const healthHost = setting('WORKER_HEALTH_HOST', '127.0.0.1');
  if (process.env.LOOKUP_QUEUES)
    say(`ignoring LOOKUP_QUEUES=${process.env.LOOKUP_QUEUES}: npm start runs one worker for every lookup kind`);
  // The Node options and environment every launcher starts the apps with (libs/runtime, ADR 0029), from the build.
  const launch = await import(pathToFileURL(join(ROOT, 'dist/libs/runtime/src/heap.js')).href);
  const { LOOKUP_QUEUES: _all, ...env } = { ...launch.APP_PROCESS_ENV, ...process.env };
  // The apps write to this script's pipes: on a terminal, ask them for readable lines rather than JSON.
  if (process.stdout.isTTY && !process.env.LOG_FORMAT) env.LOG_FORMAT = 'pretty';

  const gateway = startApp('gateway', [...launch.APP_NODE_FLAGS, DIST.gateway], {
    ...env,
    PORT: port,
    HOST: host,
    METRICS_PORT: metricsPort,
    METRICS_HOST: metricsHost,
  });
  const worker = startApp('worker', [...launch.APP_NODE_FLAGS, DIST.worker], {
    ...env,
    WORKER_HEALTH_PORT: healthPort,
    WORKER_HEALTH_HOST: healthHost,
  });
  const base = `http://${urlHost(gatewayHost)}:${port}`;
  await Promise.all([
    waitReady(gateway, `${base}/health/ready`),
    waitReady(worker, `http://${urlHost(probeHost(healthHost))}:${healthPort}/health/ready`),
  ]);
  if (stopping) return;
  console.log(`Dossier is running: ${base}/docs`);
  const everywhere = host === '0.0.0.0' || host === '::';
  say(
    `the API listens on ${urlHost(host)}:${port}` +
      (everywhere ? ' (every interface)' : ' (set HOST=0.0.0.0 to serve other machines)') +
      `; metrics on http://${urlHost(probeHost(metricsHost))}:${metricsPort}/metrics`,
  );
  say('Ctrl-C stops it');
}

// ── build ──────────────────────────────────────────────────────────────────────────────────────

/** Why a build is needed (dist missing, or the first file found newer than the last build), or null. */
function buildReason() {
  let lastBuild = Infinity;
  for (const entry of Object.values(DIST)) {
    const mtime = mtimeOf(entry);
    if (mtime === null) return `${relative(ROOT, entry)} is missing`;
    lastBuild = Math.min(lastBuild, mtime);
  }
  const sources = [...BUILD_CONFIG.map((f) => join(ROOT, f)), ...walk(join(ROOT, 'apps')), ...walk(join(ROOT, 'libs'))];
  const newer = sources.find((file) => (mtimeOf(file) ?? 0) > lastBuild);
  return newer ? `${relative(ROOT, newer)} changed since the last build` : null;
}

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') yield* walk(path);
    } else if (!TEST_FILE.test(entry.name)) {
      yield path;
    }
  }
}

function mtimeOf(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

/** npm itself (the one running `npm start` when there is one), so `npm run build` stays the one build command. */
function npmCommand(args) {
  const npm = process.env.npm_execpath;
  return npm && /\.[cm]?js$/.test(npm) ? [process.execPath, npm, ...args] : ['npm', ...args];
}

/** Runs a preparation step in the foreground (its output goes straight to ours); fails on a non-zero exit. */
async function runStep(name, [command, ...args]) {
  if (stopping) return;
  const child = spawn(command, args, { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' });
  step = child;
  const [code, signal] = await new Promise((res, rej) => {
    child.once('error', rej);
    child.once('exit', (c, s) => res([c, s]));
  });
  step = null;
  if (stopping) return;
  if (code !== 0) throw new StartError(`${name} failed (${signal ?? `exit code ${code}`})`);
}

// ── Redis and Postgres ─────────────────────────────────────────────────────────────────────────

/**
 * A TCP connect to the Redis the apps will use (REDIS_URL's host, or the first of REDIS_CLUSTER_NODES), so
 * a missing Redis is one clear line instead of a health timeout.
 */
async function checkRedis() {
  let host;
  let port;
  let variable;
  if (REDIS_CLUSTER_NODES) {
    const first = REDIS_CLUSTER_NODES.split(',')[0].trim();
    const at = first.lastIndexOf(':');
    [host, port, variable] = [
      first.slice(0, at).replace(/^\[|\]$/g, ''),
      Number(first.slice(at + 1)),
      'REDIS_CLUSTER_NODES',
    ];
  } else {
    const url = new URL(REDIS_URL);
    [host, port, variable] = [
      url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
      Number(url.port || 6379),
      'REDIS_URL',
    ];
  }
  await new Promise((res, rej) => {
    const socket = connect({ host, port, timeout: 3000 });
    socket.once('connect', () => {
      socket.destroy();
      res();
    });
    const fail = (why) => {
      socket.destroy();
      rej(
        new StartError(`cannot reach Redis at ${host}:${port} (${variable}): ${why}; start Redis or set ${variable}`),
      );
    };
    socket.once('timeout', () => fail('no answer within 3 s'));
    socket.once('error', (err) => fail(err.code ?? err.message));
  });
}

/**
 * Creates DATABASE_URL's database through the `postgres` maintenance database when it is missing;
 * true when it did.
 */
async function ensureDatabase() {
  const target = new URL(DATABASE_URL);
  const name = decodeURIComponent(target.pathname.slice(1));
  const where = `${target.hostname}:${target.port || 5432}`;
  const probe = new pg.Client({ connectionString: DATABASE_URL });
  try {
    await probe.connect();
    return false;
  } catch (err) {
    if (err.code !== '3D000' || !name) throw postgresError(err, where);
  } finally {
    await probe.end().catch(() => undefined);
  }
  const maintenance = new URL(DATABASE_URL);
  maintenance.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: maintenance.toString() });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
    say(`created database ${name} on ${where}`);
    return true;
  } catch (err) {
    if (err.code === '42P04') return false; // duplicate_database: another start created it meanwhile
    throw postgresError(err, where, `could not create database ${name}`);
  } finally {
    await admin.end().catch(() => undefined);
  }
}

function postgresError(err, where, what = `cannot use Postgres at ${where} (DATABASE_URL)`) {
  // A network error (ECONNREFUSED, ENOTFOUND, …) rather than an answer from the server.
  const unreachable = typeof err.code === 'string' && /^E[A-Z]+$/.test(err.code);
  return new StartError(
    unreachable ? `${what}: ${err.code}; start Postgres or set DATABASE_URL` : `${what}: ${err.message}`,
  );
}

// ── the apps ───────────────────────────────────────────────────────────────────────────────────

function startApp(name, args, env) {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: process.platform !== 'win32',
  });
  const app = { name, child, lines: [], exit: null };
  app.exited = new Promise((res) =>
    child.once('exit', (code, signal) => {
      app.exit = { code, signal };
      res(app.exit);
    }),
  );
  const width = 'gateway'.length;
  for (const [stream, out] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ]) {
    let partial = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop();
      for (const line of parts) {
        out.write(`${name.padEnd(width)} | ${line}\n`);
        app.lines.push(line);
        if (app.lines.length > LAST_LINES) app.lines.shift();
      }
    });
  }
  apps.push(app);
  void app.exited.then(() => onAppExit(app));
  return app;
}

async function waitReady(app, url) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer yet';
  while (!stopping && app.exit === null) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = err.cause?.code ?? err.message;
    }
    if (Date.now() > deadline) {
      throw new StartError(`${app.name} not ready after ${READY_TIMEOUT_MS / 1000} s (${url}: ${last})`);
    }
    await new Promise((res) => setTimeout(res, 250));
  }
}

/** A child that exits while nothing asked it to takes the whole service down. */
function onAppExit(app) {
  if (stopping) return;
  const { code, signal } = app.exit;
  console.error(`dossier: the ${app.name} exited unexpectedly (${signal ?? `exit code ${code}`}); its last output:`);
  for (const line of app.lines) console.error(`  ${line}`);
  void stopApps().then(() => process.exit(code || 1));
}

/** SIGTERM to every app still running, once; resolves when all have exited. */
async function stopApps() {
  stopping = true;
  for (const app of apps) if (app.exit === null) app.child.kill('SIGTERM');
  return Promise.all(apps.map((app) => app.exited));
}

function onSignal(signal) {
  if (stopping) {
    // npm forwards the terminal's signal as well: only a second Ctrl-C a moment later means "now".
    if (Date.now() - firstSignalAt < 2000) return;
    say('stopping now (SIGKILL)');
    for (const app of apps) if (app.exit === null) app.child.kill('SIGKILL');
    step?.kill('SIGKILL');
    process.exit(1);
  }
  firstSignalAt = Date.now();
  if (apps.length === 0) {
    // Still preparing: stop the step that runs (if any) and exit as an interrupted command does.
    stopping = true;
    const code = signal === 'SIGINT' ? 130 : 143;
    if (!step) process.exit(code);
    step.once('exit', () => process.exit(code));
    step.kill('SIGTERM');
    return;
  }
  say(`${signal}: stopping the gateway and the worker (Ctrl-C again to force)`);
  void stopApps().then((exits) => {
    const unclean = exits.map((e, i) => [apps[i].name, e]).filter(([, e]) => e.code !== 0);
    for (const [name, e] of unclean)
      console.error(`dossier: the ${name} stopped with ${e.signal ?? `exit code ${e.code}`}`);
    say('stopped');
    process.exit(unclean.length ? 1 : 0);
  });
}

// ── small helpers ──────────────────────────────────────────────────────────────────────────────

async function freePort() {
  const server = createServer();
  await new Promise((res) => server.listen(0, '127.0.0.1', res));
  const { port } = server.address();
  await new Promise((res) => server.close(res));
  return port;
}

/** Where to reach a server listening on `host`: loopback for the wildcard addresses. */
function probeHost(host) {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

function urlHost(host) {
  return host.includes(':') ? `[${host}]` : host;
}
