import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { APP_NODE_FLAGS, APP_PROCESS_ENV } from '@dossier/runtime';
import { testEnv, uniquePrefix } from './test-env';
import { LOOPBACK_PROVIDER_ENV } from './loopback-env';
import { DIST } from './dist';
import { waitFor } from './wait-for';

export { DIST } from './dist';

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

export interface StartOptions {
  /** Node options before the script (e.g. `--cpu-prof`, `-r hook.js`). */
  nodeArgs?: string[];
  /** Arguments after the script. */
  args?: string[];
  /** Working directory of the process (default: this one's). */
  cwd?: string;
  /** Keep only about this many characters of output, the newest (default: all of it). */
  maxOutputChars?: number;
}

/** How long one readiness probe may take before it counts as a failed one. */
const PROBE_TIMEOUT_MS = 5_000;

/** A compiled app running as its own process, with its output kept for failure messages. */
export class AppProcess {
  private output = '';
  readonly exited: Promise<number | null>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
    maxOutputChars = Infinity,
  ) {
    const keep = (d: Buffer) => {
      this.output += d.toString();
      if (this.output.length > maxOutputChars) this.output = this.output.slice(-Math.floor(maxOutputChars / 2));
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    // 'close', not 'exit': by then all the process's output is read, so a test can check its last lines.
    this.exited = new Promise((res) => child.once('close', (code) => res(code)));
  }

  /**
   * Spawns `node [nodeArgs] script [args]` with PATH, NODE_ENV=test and LOG_LEVEL=warn under `env`. The
   * gateway and the worker start as every launcher starts them (APP_NODE_FLAGS before `nodeArgs`, which
   * can override them; APP_PROCESS_ENV under `env`).
   */
  static start(name: string, script: string, env: Record<string, string>, options: StartOptions = {}): AppProcess {
    const target = resolve(options.cwd ?? '.', script);
    const app = target === DIST.gateway || target === DIST.worker;
    const nodeArgs = [...(app ? APP_NODE_FLAGS : []), ...(options.nodeArgs ?? [])];
    const child = spawn(process.execPath, [...nodeArgs, script, ...(options.args ?? [])], {
      env: {
        PATH: process.env['PATH'] ?? '',
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        ...(app ? APP_PROCESS_ENV : {}),
        ...env,
      },
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new AppProcess(name, child, options.maxOutputChars);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get logs(): string {
    return this.output;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Polls `url` (a health endpoint) until it answers 200; fails at once when the process exits,
   * after `timeoutMs` otherwise, with the process's output in the message.
   */
  async waitReady(url: string, timeoutMs = 20_000): Promise<void> {
    const gone = new AbortController();
    void this.exited.then((code) =>
      gone.abort(new Error(`${this.name} exited early (${String(code ?? this.child.signalCode)})`)),
    );
    await waitFor(
      async () => {
        const res = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
        await res.arrayBuffer();
        return res.status;
      },
      (status) => status === 200,
      { timeoutMs, what: `${this.name} ready`, signal: gone.signal },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n--- ${this.name} output ---\n${this.logs}`);
    });
  }

  /** Sends the signal and waits for the exit (SIGKILL after `timeoutMs`). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<number | null> {
    if (!this.running) return this.child.exitCode;
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

export interface StackOptions {
  /** Environment shared by gateway and worker (overrides the defaults). */
  env?: Record<string, string>;
  gatewayEnv?: Record<string, string>;
  workerEnv?: Record<string, string>;
  /** Start no worker (tests that start their own). */
  noWorker?: boolean;
  label?: string;
}

/** The WEBHOOK_SECRET_KEY every test stack runs with (32 bytes, hex): tests read stored secrets back with it. */
export const TEST_WEBHOOK_SECRET_KEY = '7f3a9c1e5b2d4f6081a3c5e7092b4d6f8a1c3e5071b3d5f7092a4c6e8b0d2f41';

/** Gateway and worker as separate processes against the run's database and a fresh queue prefix. */
export class Stack {
  private constructor(
    readonly baseUrl: string,
    readonly env: Record<string, string>,
    readonly gateway: AppProcess,
    readonly workers: AppProcess[],
    private readonly workerEnv: Record<string, string>,
  ) {}

  private readonly extraGateways: AppProcess[] = [];
  /** Each started worker's health and metrics base URL (WORKER_HEALTH_PORT), in the order of `workers`. */
  readonly workerUrls: string[] = [];

  static async start(options: StackOptions = {}): Promise<Stack> {
    const port = await freePort();
    const env: Record<string, string> = {
      DATABASE_URL: testEnv.databaseUrl,
      REDIS_URL: testEnv.redisUrl,
      QUEUE_PREFIX: uniquePrefix(options.label ?? 'stack'),
      DB_POOL_SIZE: '5',
      WEBHOOK_SECRET_KEY: TEST_WEBHOOK_SECRET_KEY,
      ...LOOPBACK_PROVIDER_ENV,
      ...options.env,
    };
    const gateway = AppProcess.start('gateway', DIST.gateway, {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      ...options.gatewayEnv,
    });
    const workerEnv = { ...env, ...options.workerEnv };
    const stack = new Stack(`http://127.0.0.1:${port}`, env, gateway, [], workerEnv);
    try {
      await gateway.waitReady(`${stack.baseUrl}/health/ready`);
      if (!options.noWorker) await stack.startWorker();
    } catch (err) {
      await stack.stop();
      throw err;
    }
    return stack;
  }

  /** Starts one more gateway process on the same database and queue prefix; returns its base URL. */
  async startGateway(extraEnv: Record<string, string> = {}): Promise<{ app: AppProcess; baseUrl: string }> {
    const port = await freePort();
    const app = AppProcess.start(`gateway${this.extraGateways.length + 1}`, DIST.gateway, {
      ...this.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      ...extraEnv,
    });
    this.extraGateways.push(app);
    const baseUrl = `http://127.0.0.1:${port}`;
    await app.waitReady(`${baseUrl}/health/ready`);
    return { app, baseUrl };
  }

  /** Starts one more worker process and waits until its health check (on `WORKER_HEALTH_PORT` when given) says it consumes. */
  async startWorker(extraEnv: Record<string, string> = {}): Promise<AppProcess> {
    const port = extraEnv['WORKER_HEALTH_PORT'] ?? String(await freePort());
    const worker = AppProcess.start(`worker${this.workers.length}`, DIST.worker, {
      ...this.workerEnv,
      LOG_LEVEL: 'info',
      WORKER_HEALTH_PORT: String(port),
      WORKER_HEALTH_HOST: '127.0.0.1',
      ...extraEnv,
    });
    this.workers.push(worker);
    this.workerUrls.push(`http://127.0.0.1:${port}`);
    await worker.waitReady(`http://127.0.0.1:${port}/health/ready`);
    return worker;
  }

  /** Everything the processes printed, for assertion messages. */
  get logs(): string {
    return [this.gateway, ...this.extraGateways, ...this.workers].map((p) => `--- ${p.name} ---\n${p.logs}`).join('\n');
  }

  async stop(): Promise<void> {
    await Promise.all([...this.workers, ...this.extraGateways, this.gateway].map((p) => p.stop()));
  }
}

/** Runs the compiled CLI (against the run's database unless `env` names one) and returns its exit code and output. */
export async function runCli(
  args: string[],
  env: Record<string, string> = {},
  /** Aborted: the CLI gets SIGTERM and this rejects (the bench's Ctrl-C, during a long import). */
  signal?: AbortSignal,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [DIST.cli, ...args], {
    env: { PATH: process.env['PATH'] ?? '', DATABASE_URL: env['DATABASE_URL'] ?? testEnv.databaseUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    signal,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // 'close', not 'exit': at 'exit' the child's stdout may not all have been read yet (Node's docs), and a
  // loaded machine then hands the test an empty or cut answer.
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/**
 * Runs `command` (no shell: `['sh', '-c', …]` for one) in `cwd` with exactly `env`, to its end or `timeoutMs`
 * (then killed); returns its exit code (null when killed) and everything it printed, stdout and stderr as they came.
 */
export async function runCommand(
  command: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<{ code: number | null; output: string }> {
  const child = spawn(command[0]!, command.slice(1), {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, output };
}
