import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A process that listens on a loopback port with a backlog of 1 and then never accepts: its only thread
 * blocks in Atomics.wait (no CPU), so its event loop never runs again.
 */
const LISTEN_AND_HANG = `
const server = require('node:net').createServer();
server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () =>
  process.stdout.write(server.address().port + '\\n', () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)),
);`;

/** A connection on loopback completes in well under this; one that has not is dropped (the queue is full). */
const DROPPED_AFTER_MS = 1000;
/** More connections than any accept queue of backlog 1 holds (Linux keeps backlog + 1). */
const MAX_FILLERS = 8;

/**
 * A loopback port that never completes a connection, as a firewall that drops packets or a host that has gone
 * away: a listening socket whose accept queue is full (nothing accepts from it, and connections fill it), so
 * the kernel drops every further SYN and the client waits for its connect timeout. No root, no route off
 * loopback. `close()` ends the listening process.
 */
export class Blackhole {
  private constructor(
    private readonly child: ChildProcess,
    private readonly fillers: Socket[],
    readonly port: number,
  ) {}

  /** `http://127.0.0.1:<port>`, for a base URL setting. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<Blackhole> {
    const child = spawn(process.execPath, ['-e', LISTEN_AND_HANG], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
    const port = Number(chunk.toString().trim());
    const fillers: Socket[] = [];
    const hole = new Blackhole(child, fillers, port);
    try {
      for (let i = 0; i < MAX_FILLERS; i++) {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        fillers.push(socket);
        const connected = await Promise.race([
          once(socket, 'connect').then(() => true),
          sleep(DROPPED_AFTER_MS).then(() => false),
        ]);
        if (!connected) return hole;
      }
    } catch (error) {
      await hole.close();
      throw error;
    }
    await hole.close();
    throw new Error(`blackhole: port ${port} still completed connections after ${MAX_FILLERS}`);
  }

  async close(): Promise<void> {
    for (const socket of this.fillers) socket.destroy();
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL');
      await once(this.child, 'close');
    }
  }
}
