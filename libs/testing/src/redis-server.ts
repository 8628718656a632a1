import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes';
import { waitFor } from './wait-for';

const run = promisify(execFile);

/** Whether `reply` holds one whole RESP reply: a line, or a bulk string's header and body. */
function complete(reply: string): boolean {
  const eol = reply.indexOf('\r\n');
  if (eol === -1) return false;
  if (!reply.startsWith('$')) return true;
  const length = Number(reply.slice(1, eol));
  return length < 0 || Buffer.byteLength(reply) >= eol + 2 + length + 2;
}

/** Sends one inline command to 127.0.0.1:`port` and returns its reply (`''` when refused). */
async function ask(port: number, command: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.setTimeout(1000, () => socket.destroy());
    socket.on('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (d) => {
      reply += d.toString();
      if (complete(reply)) socket.end();
    });
    socket.on('error', () => resolve(''));
    socket.on('close', () => resolve(reply));
  });
}

/**
 * A redis-server of the test's own (Debian's binary) on a free loopback port, without persistence
 * (`--save "" --appendonly no`): for tests that kill and restart Redis, or build a cluster.
 */
export class RedisServer {
  private child?: ChildProcess;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly extraArgs: string[],
  ) {}

  static async start(extraArgs: string[] = [], dir?: string): Promise<RedisServer> {
    const server = new RedisServer(
      await freePort(),
      dir ?? (await mkdtemp(join(tmpdir(), 'dossier-redis-'))),
      extraArgs,
    );
    await server.startProcess();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Sends an inline command (e.g. `CLUSTER INFO`) and returns the raw reply. */
  command(text: string): Promise<string> {
    return ask(this.port, text);
  }

  /** Kills the server (SIGKILL: no goodbye to its clients) and waits until it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  /** Starts the server again on the same port (empty: nothing was persisted). */
  async restart(): Promise<void> {
    await this.kill();
    await this.startProcess();
  }

  async stop(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }

  private async startProcess(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    this.child = spawn('redis-server', [...args, '--dir', this.dir, ...this.extraArgs], { stdio: 'ignore' });
    const child = this.child;
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
        return ask(this.port, 'PING');
      },
      (reply) => reply.startsWith('+PONG'),
      { timeoutMs: 10_000, what: `redis-server on port ${this.port}` },
    );
  }
}

/** A Redis Cluster of `masters` masters (no replicas) on free loopback ports, in a temporary directory. */
export class RedisClusterServers {
  private constructor(
    readonly servers: RedisServer[],
    private readonly dir: string,
  ) {}

  static async start(masters = 3): Promise<RedisClusterServers> {
    const dir = await mkdtemp(join(tmpdir(), 'dossier-cluster-'));
    const servers: RedisServer[] = [];
    const cluster = new RedisClusterServers(servers, dir);
    try {
      for (let i = 0; i < masters; i++) {
        const nodeDir = join(dir, `node${i}`);
        await mkdir(nodeDir);
        servers.push(
          await RedisServer.start(
            ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '5000'],
            nodeDir,
          ),
        );
      }
      await run('redis-cli', [
        '--cluster',
        'create',
        ...servers.map((s) => `127.0.0.1:${s.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ]);
      for (const server of servers) {
        await waitFor(
          () => server.command('CLUSTER INFO'),
          (info) => info.includes('cluster_state:ok'),
          { timeoutMs: 20_000, what: `cluster node ${server.port} to be ok` },
        );
      }
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** `host:port,…` as REDIS_CLUSTER_NODES takes it. */
  get nodes(): string {
    return this.servers.map((s) => `127.0.0.1:${s.port}`).join(',');
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.stop()));
    await rm(this.dir, { recursive: true, force: true });
  }
}
