import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { APP_NODE_FLAGS, APP_PROCESS_ENV } from '@dossier/runtime';
import {
  Api,
  LOOPBACK_PROVIDER_ENV,
  REPO_ROOT,
  adminSql,
  freePort,
  testEnv,
  uniquePrefix,
  waitFor,
  withDatabase,
} from '@dossier/testing';

/** A clone builds from scratch (tsc over every app) before it starts: allow for a busy machine. */
const READY_TIMEOUT_MS = 200_000;

/** Linux process table: pid → parent pid and command line. */
function processes(): Map<number, { ppid: number; cmd: string; cwd: string | null }> {
  const table = new Map<number, { ppid: number; cmd: string; cwd: string | null }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may contain spaces and parentheses, so split after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      let cwd: string | null = null;
      try {
        cwd = readlinkSync(`/proc/${entry}/cwd`);
      } catch {
        cwd = null; // another user's process
      }
      table.set(Number(entry), { ppid, cmd, cwd });
    } catch {
      continue; // exited while we looked
    }
  }
  return table;
}

function descendants(root: number): { pid: number; cmd: string }[] {
  const table = processes();
  const found: { pid: number; cmd: string }[] = [];
  const queue = [root];
  while (queue.length) {
    const parent = queue.shift()!;
    for (const [pid, p] of table) {
      if (p.ppid === parent) {
        found.push({ pid, cmd: p.cmd });
        queue.push(pid);
      }
    }
  }
  return found;
}

/** `npm start` in `cwd` as a terminal's foreground job: its own process group, output kept. */
class NpmStart {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output = '';

  /** `node`: the Node (and the npm beside it) to run `npm start` with; by default this test's own. */
  constructor(cwd: string, env: Record<string, string>, node?: string) {
    const npmCli = process.env['npm_execpath'];
    const [command, ...args] = node
      ? [join(dirname(node), 'npm'), 'start']
      : npmCli && /\.[cm]?js$/.test(npmCli)
        ? [process.execPath, npmCli, 'start']
        : ['npm', 'start'];
    this.child = spawn(command!, args, {
      cwd,
      // The harness's provider settings, as every test's apps have: the worker's start-up checks of its
      // keyless upstreams and resolvers stay on loopback.
      env: {
        PATH: node ? `${dirname(node)}:/usr/bin:/bin` : (process.env['PATH'] ?? ''),
        HOME: process.env['HOME'] ?? cwd,
        LOG_LEVEL: 'warn',
        ...LOOPBACK_PROVIDER_ENV,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child.stdout!.on('data', (d: Buffer) => (this.output += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.output += d.toString()));
    this.exited = new Promise((res) => this.child.once('exit', (code, signal) => res({ code, signal })));
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Waits for the ready line; returns the base URL it names. */
  async ready(): Promise<string> {
    const line = /^Dossier is running: (http:\/\/127\.0\.0\.1:\d+)\/docs$/m;
    const seen = await waitFor(
      () => Promise.resolve({ ready: line.test(this.output), running: this.running }),
      (s) => s.ready || !s.running,
      { timeoutMs: READY_TIMEOUT_MS, what: 'the ready line of npm start' },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n--- npm start output ---\n${this.output}`);
    });
    if (!seen.ready) throw new Error(`npm start exited before it was ready:\n${this.output}`);
    return line.exec(this.output)![1]!;
  }

  /** Every process started under npm: npm → node scripts/start.mjs → the gateway and the worker. */
  tree(): { pid: number; cmd: string }[] {
    return [{ pid: this.child.pid!, cmd: 'npm start' }, ...descendants(this.child.pid!)];
  }
}

/** The machine's own Node when it is older than the project needs (Node 20 on this project's machines). */
function oldNode(): { path: string; version: string } {
  const candidates = [process.env['DOSSIER_TEST_OLD_NODE'], '/usr/bin/node', '/usr/local/bin/node'];
  for (const path of candidates) {
    if (!path || !existsSync(path)) continue;
    const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim();
    const [major, minor] = version.slice(1).split('.').map(Number);
    if (major! < 22 || (major === 22 && minor! < 22)) return { path, version };
  }
  throw new Error(
    `this test runs npm start with a Node older than the project needs, and found none at ${candidates.join(', ')}: ` +
      'set DOSSIER_TEST_OLD_NODE to one (e.g. Node 20)',
  );
}

/** The listening TCP sockets on `port` as "address:port" (IPv4 and IPv6, from /proc/net). */
function listeners(port: number): string[] {
  const found: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== '0A' || !local) continue; // 0A: LISTEN
      const [hex, portHex] = local.split(':');
      if (parseInt(portHex!, 16) !== port) continue;
      found.push(
        hex!.length === 8
          ? `${hex!
              .match(/../g)!
              .reverse()
              .map((b) => parseInt(b, 16))
              .join('.')}:${port}`
          : `[${hex}]:${port}`,
      );
    }
  }
  return found;
}

describe('npm start (a fresh clone on a machine with Redis and Postgres, no Docker)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dossier-start-'));
  const repo = join(dir, 'dossier');
  const database = `${new URL(testEnv.databaseUrl).pathname.slice(1)}_start`;
  const started: NpmStart[] = [];
  const npmStart = async (port?: number, node?: string): Promise<NpmStart> => {
    const npm = new NpmStart(
      repo,
      {
        DATABASE_URL: withDatabase(testEnv.baseDatabaseUrl, database),
        REDIS_URL: testEnv.redisUrl,
        PORT: String(port ?? (await freePort())),
        QUEUE_PREFIX: uniquePrefix('start'),
      },
      node,
    );
    started.push(npm);
    return npm;
  };
  const apps = (tree: { pid: number; cmd: string }[], script: string) =>
    tree.filter((p) => p.cmd.includes(join(repo, script)));
  const alive = (tree: { pid: number }[]) => {
    const now = processes();
    return tree.filter((p) => now.has(p.pid));
  };

  afterAll(async () => {
    for (const npm of started) if (npm.running) process.kill(-npm.child.pid!, 'SIGKILL');
    // Nothing started from the clone may outlive the test, whatever happened above.
    for (const [pid, p] of processes()) if (p.cwd?.startsWith(repo)) process.kill(pid, 'SIGKILL');
    await adminSql(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "on the machine's older Node: fetches a supported one, builds, creates and migrates the database, " +
      'serves a phone lookup on loopback only, and stops cleanly on Ctrl-C',
    async () => {
      const old = oldNode();
      // A clone of HEAD, with this checkout's node_modules (a symlink: npm ci would need the registry).
      execFileSync('git', ['clone', '--quiet', '--no-checkout', REPO_ROOT, repo]);
      const head = execFileSync('git', ['-C', REPO_ROOT, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
      execFileSync('git', ['-C', repo, 'checkout', '--quiet', '--detach', head]);
      symlinkSync(join(REPO_ROOT, 'node_modules'), join(repo, 'node_modules'), 'dir');
      expect(existsSync(join(repo, 'dist'))).toBe(false);
      expect(await adminSql('SELECT 1 FROM pg_database WHERE datname = $1', [database])).toEqual([]);

      const port = await freePort();
      const npm = await npmStart(port, old.path);
      const baseUrl = await npm.ready();
      // Said before anything else it does (npm's own two lines of banner come first).
      const ours = npm.output.split('\n').filter((line) => line.startsWith('dossier:'));
      expect(ours[0]).toMatch(
        new RegExp(
          `^dossier: Node ${old.version.replace(/\./g, '\\.')} is older than this project needs .*; using Node 22\.`,
        ),
      );
      expect(npm.output).toContain('building (dist/');
      // Loopback only, as it says; /metrics not on the API's port but on the loopback one it names.
      expect(npm.output).toContain(`dossier: the API listens on 127.0.0.1:${port}`);
      expect(listeners(port)).toEqual([`127.0.0.1:${port}`]);
      const metricsUrl = /metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(npm.output)![1]!;
      expect((await fetch(`${baseUrl}/metrics`)).status).toBe(404);
      expect((await fetch(metricsUrl)).status).toBe(200);
      expect(npm.output).toContain(`created database ${database}`);

      const api = new Api(baseUrl);
      expect((await api.get('/docs')).status).toBe(200);
      const { key } = await api.register();
      const phone = await api.post<{ status: string; results: { e164: string; valid: boolean }[] }>(
        '/v1/verify/phone',
        { phone: '+1 650 253 0000' },
        { key },
      );
      expect(phone.status).toBe(200);
      expect(phone.body.status).toBe('success');
      expect(phone.body.results).toEqual([expect.objectContaining({ e164: '+16502530000', valid: true })]);

      const tree = npm.tree();
      expect(tree.filter((p) => p.cmd.includes('scripts/start.mjs'))).toHaveLength(1);
      expect(apps(tree, 'dist/apps/gateway/src/main.js')).toHaveLength(1);
      expect(apps(tree, 'dist/apps/worker/src/main.js')).toHaveLength(1);
      // Both as every launcher starts them (ADR 0029): the Node flags before the script, the environment added.
      for (const app of [
        ...apps(tree, 'dist/apps/gateway/src/main.js'),
        ...apps(tree, 'dist/apps/worker/src/main.js'),
      ]) {
        const argv = readFileSync(`/proc/${app.pid}/cmdline`, 'utf8').split('\0');
        expect(execFileSync(argv[0]!, ['--version'], { encoding: 'utf8' })).toMatch(/^v22\./); // not the old Node
        expect(argv.slice(1, 1 + APP_NODE_FLAGS.length)).toEqual(APP_NODE_FLAGS);
        const environ = readFileSync(`/proc/${app.pid}/environ`, 'utf8').split('\0');
        for (const [name, value] of Object.entries(APP_PROCESS_ENV)) expect(environ).toContain(`${name}=${value}`);
      }

      process.kill(-npm.child.pid!, 'SIGINT'); // what Ctrl-C does: the signal goes to the whole foreground group
      const exit = await npm.exited;
      expect({ ...exit, output: exit.code === 0 ? '' : npm.output }).toEqual({ code: 0, signal: null, output: '' });
      expect(alive(tree)).toEqual([]);
      expect([...processes().values()].filter((p) => p.cwd?.startsWith(repo))).toEqual([]);
    },
    READY_TIMEOUT_MS + 60_000,
  );

  it('starts without building or creating anything the second time; a dead worker takes the gateway down', async () => {
    const npm = await npmStart();
    await npm.ready();
    expect(npm.output).not.toContain('building');
    expect(npm.output).not.toContain('created database');
    expect(npm.output).toContain('database is up to date');

    const tree = npm.tree();
    const [worker] = apps(tree, 'dist/apps/worker/src/main.js');
    process.kill(worker!.pid, 'SIGKILL');
    const exit = await npm.exited;
    expect(exit.code).toBe(1);
    expect(npm.output).toContain('the worker exited unexpectedly (SIGKILL)');
    expect(alive(tree)).toEqual([]);
  });
  it('checks the Redis the apps will use: the first of REDIS_CLUSTER_NODES when set, not REDIS_URL', async () => {
    const port = await freePort(); // nothing listens there
    const npm = new NpmStart(repo, {
      DATABASE_URL: withDatabase(testEnv.baseDatabaseUrl, database),
      REDIS_URL: testEnv.redisUrl, // reachable, but unused with a cluster
      REDIS_CLUSTER_NODES: `127.0.0.1:${port}`,
      QUEUE_PREFIX: `{${uniquePrefix('start')}}`,
      PORT: String(await freePort()),
    });
    started.push(npm);
    expect((await npm.exited).code).toBe(1);
    expect(npm.output).toContain(`cannot reach Redis at 127.0.0.1:${port} (REDIS_CLUSTER_NODES): ECONNREFUSED`);
  });
});
