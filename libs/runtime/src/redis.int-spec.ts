import { Queue } from 'bullmq';
import IORedis, { type Redis } from 'ioredis';
import type { Duplex } from 'node:stream';
import { testEnv, uniquePrefix, waitFor } from '@dossier/testing';
import { failFastRedisOptions, RedisConnections, whenReady, type RedisClient } from './redis';

/** Counts the system-call-level writes a socket makes: `_write` for one chunk, `_writev` for several. */
function countWrites(stream: Duplex): { calls: number; chunks: number } {
  const counts = { calls: 0, chunks: 0 };
  const socket = stream as Duplex & { _writev?: (chunks: unknown[], cb: () => void) => void };
  const write = socket._write.bind(socket);
  socket._write = (chunk, encoding, cb) => {
    counts.calls += 1;
    counts.chunks += 1;
    write(chunk, encoding, cb);
  };
  const writev = socket._writev?.bind(socket);
  if (writev)
    socket._writev = (chunks, cb) => {
      counts.calls += 1;
      counts.chunks += chunks.length;
      writev(chunks, cb);
    };
  return counts;
}

function streamOf(client: RedisClient): Duplex {
  return (client as Redis & { stream: Duplex }).stream;
}

/**
 * Runs `fn` in `n` separate callbacks of one event-loop turn (immediates queued together run in the
 * same turn, each followed by its own microtasks), as the requests a gateway reads in one turn do.
 */
function inSeparateCallbacks<T>(n: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise<T>((resolve, reject) => {
          setImmediate(() => void fn(i).then(resolve, reject));
        }),
    ),
  );
}

describe('Redis connections coalesce their writes (against the real Redis)', () => {
  const prefix = uniquePrefix('coalesce');
  const target = { url: testEnv.redisUrl, clusterNodes: null };
  let connections: RedisConnections;
  let perTick: RedisConnections;
  let plain: Redis;

  beforeAll(async () => {
    connections = await RedisConnections.open(target, 'turn');
    perTick = await RedisConnections.open(target, 'tick');
    plain = await whenReady(new IORedis({ ...failFastRedisOptions(testEnv.redisUrl), enableOfflineQueue: true }));
  });
  afterAll(async () => {
    const keys = await plain.keys(`${prefix}*`);
    if (keys.length) await plain.del(...keys);
    connections.close();
    perTick.close();
    plain.disconnect();
  });

  it('flushing each turn: the commands of separate callbacks in one write, each answered in order', async () => {
    const client = await whenReady(await connections.commands());
    const counts = countWrites(streamOf(client));
    const key = `${prefix}:counter`;

    const values = await inSeparateCallbacks(20, () => client.incr(key));

    expect({ ...counts }).toEqual({ calls: 1, chunks: 20 });
    expect(values.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it("flushing each tick: one burst of replies' follow-up commands in one write, separate callbacks' apart", async () => {
    const client = await whenReady(await perTick.commands());
    const counts = countWrites(streamOf(client));
    const key = `${prefix}:tick`;

    // 10 replies read together; each one's continuation sends its next command in the same tick.
    await Promise.all(Array.from({ length: 10 }, () => client.ping().then(() => client.incr(key))));
    const burst = { ...counts };
    await inSeparateCallbacks(5, () => client.ping());

    // Two writes: the pings, then the increments (three if Redis's replies arrived in two reads).
    expect(burst.chunks).toBe(20);
    expect(burst.calls).toBeLessThanOrEqual(3);
    expect({ calls: counts.calls - burst.calls, chunks: counts.chunks - burst.chunks }).toEqual({
      calls: 5,
      chunks: 5,
    });
    expect(await client.get(key)).toBe('10');
  });

  it('is what makes the difference: a plain ioredis connection writes each command on its own', async () => {
    const counts = countWrites(streamOf(plain));
    await inSeparateCallbacks(20, () => plain.ping());
    expect(counts).toEqual({ calls: 20, chunks: 20 });
  });

  it('coalesces again on the socket a reconnect opens', async () => {
    const client = await whenReady(await connections.commands());
    const before = streamOf(client);
    before.destroy();
    await waitFor(
      async () => client.status === 'ready' && streamOf(client) !== before,
      (reconnected) => reconnected,
      { timeoutMs: 10_000, what: 'the client reconnected' },
    );

    const counts = countWrites(streamOf(client));
    await inSeparateCallbacks(5, () => client.ping());
    expect(counts).toEqual({ calls: 1, chunks: 5 });
  });

  it("reaches BullMQ's own connections: adds from separate callbacks leave in one write", async () => {
    const queue = new Queue('coalesce', { connection: connections.queues(), prefix });
    try {
      await queue.waitUntilReady();
      await queue.add('warm-up', {}); // loads the script, so the adds below are one EVALSHA each
      const client = await (queue as unknown as { backend: { client: Promise<Redis> } }).backend.client;
      const counts = countWrites(streamOf(client));

      const jobs = await inSeparateCallbacks(10, (i) => queue.add('job', { i }));

      expect({ ...counts }).toEqual({ calls: 1, chunks: 10 });
      expect(new Set(jobs.map((job) => job.id)).size).toBe(10);
      expect(await queue.count()).toBe(11);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
