/**
 * Loopback TCP proxies that count what a process sends to Postgres and Redis, for the bench's
 * --count-wire: Postgres statements (simple `Q` + extended-protocol `E`, and `S` syncs = round
 * trips) and Redis commands by name (Lua scripts by their BullMQ name where the SHA is known).
 * They cost CPU in the bench process and add a hop, so figures from a counting run are for
 * round trips only, never for throughput.
 */
import { createHash } from 'node:crypto';
import { TcpProxy } from '@dossier/testing';

export class Counts {
  readonly byName = new Map<string, number>();
  add(name: string, n = 1): void {
    this.byName.set(name, (this.byName.get(name) ?? 0) + n);
  }
  total(filter: (name: string) => boolean = () => true): number {
    let sum = 0;
    for (const [k, v] of this.byName) if (filter(k)) sum += v;
    return sum;
  }
  reset(): void {
    this.byName.clear();
  }
  snapshot(): Map<string, number> {
    return new Map(this.byName);
  }
}

/** SHA1 → script name for BullMQ's Lua scripts (ioredis sends EVALSHA sha1(content)). */
function bullmqScriptNames(): Map<string, string> {
  const names = new Map<string, string>();
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const scripts = require('bullmq/dist/cjs/scripts') as Record<string, { name: string; content: string }>;
    for (const s of Object.values(scripts)) {
      if (s && typeof s.content === 'string') names.set(createHash('sha1').update(s.content).digest('hex'), s.name);
    }
  } catch {
    // names stay SHA prefixes
  }
  return names;
}
const SCRIPT_NAMES = bullmqScriptNames();

/** Counts the commands in a client → Redis byte stream (RESP arrays of bulk strings, as ioredis sends). */
class RespCounter {
  private buf: Buffer = Buffer.alloc(0);
  constructor(private readonly counts: Counts) {}

  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    let off = 0;
    for (;;) {
      const parsed = this.parseOne(off);
      if (!parsed) break;
      off = parsed.next;
      this.counts.add(parsed.name);
    }
    this.buf = off === this.buf.length ? Buffer.alloc(0) : this.buf.subarray(off);
  }

  private line(off: number): { text: string; next: number } | null {
    const end = this.buf.indexOf('\r\n', off);
    if (end < 0) return null;
    return { text: this.buf.toString('latin1', off, end), next: end + 2 };
  }

  private parseOne(start: number): { name: string; next: number } | null {
    if (start >= this.buf.length) return null;
    if (this.buf[start] !== 0x2a /* * */) {
      // inline command (not used by ioredis): one line
      const l = this.line(start);
      return l ? { name: (l.text.split(' ')[0] ?? '?').toUpperCase(), next: l.next } : null;
    }
    const head = this.line(start + 1);
    if (!head) return null;
    const n = Number(head.text);
    let off = head.next;
    const args: string[] = [];
    for (let i = 0; i < n; i++) {
      if (off >= this.buf.length || this.buf[off] !== 0x24 /* $ */) return null;
      const lenLine = this.line(off + 1);
      if (!lenLine) return null;
      const len = Number(lenLine.text);
      const dataEnd = lenLine.next + len;
      if (dataEnd + 2 > this.buf.length) return null;
      if (i < 2) args.push(this.buf.toString('latin1', lenLine.next, Math.min(dataEnd, lenLine.next + 64)));
      off = dataEnd + 2;
    }
    let name = (args[0] ?? '?').toUpperCase();
    if (name === 'EVALSHA' && args[1]) name = `EVALSHA ${SCRIPT_NAMES.get(args[1]) ?? args[1].slice(0, 8)}`;
    else if (name === 'EVAL') name = 'EVAL (script text)';
    return { name, next: off };
  }
}

/** Counts frontend messages in a client → Postgres byte stream (after the startup packet). */
class PgCounter {
  private buf: Buffer = Buffer.alloc(0);
  private started = false;
  constructor(private readonly counts: Counts) {}

  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    let off = 0;
    for (;;) {
      if (!this.started) {
        if (this.buf.length - off < 8) break;
        const len = this.buf.readInt32BE(off);
        if (this.buf.length - off < len) break;
        const code = this.buf.readInt32BE(off + 4);
        off += len;
        // SSLRequest / GSSENCRequest are followed by another startup packet; a startup packet ends it.
        if (code !== 80877103 && code !== 80877104) this.started = true;
        continue;
      }
      if (this.buf.length - off < 5) break;
      const len = this.buf.readInt32BE(off + 1);
      if (this.buf.length - off < 1 + len) break;
      const type = String.fromCharCode(this.buf[off]!);
      off += 1 + len;
      if (type === 'Q') this.counts.add('statement (simple Q)');
      else if (type === 'E') this.counts.add('statement (extended E)');
      else if (type === 'S') this.counts.add('sync (round trip)');
      else if (type === 'P') this.counts.add('parse');
    }
    this.buf = off === this.buf.length ? Buffer.alloc(0) : this.buf.subarray(off);
  }
}

/** A loopback proxy in front of Postgres or Redis that counts what its clients send. */
export interface CountingProxy {
  proxy: TcpProxy;
  counts: Counts;
}

/** Starts a counting proxy to the server of `targetUrl`; `proxy.url(targetUrl)` reaches it through the proxy. */
export async function countingProxy(protocol: 'redis' | 'postgres', targetUrl: string): Promise<CountingProxy> {
  const counts = new Counts();
  const proxy = await TcpProxy.forUrl(targetUrl, () => {
    const counter = protocol === 'redis' ? new RespCounter(counts) : new PgCounter(counts);
    return (chunk) => counter.push(chunk);
  }).start();
  return { proxy, counts };
}

/** The Postgres and Redis proxies in front of one process. */
export interface WireCounters {
  pg: CountingProxy;
  redis: CountingProxy;
}

/** Round trips per completed request of each counted process, as report lines. */
export function wireLines(counted: { role: string; wire: WireCounters | null }[], done: number): string[] {
  const lines: string[] = [];
  for (const { role, wire } of counted) {
    if (!wire || done === 0) continue;
    const pg = wire.pg.counts;
    const stmts = pg.total((k) => k.startsWith('statement'));
    const syncs = pg.total((k) => k.startsWith('sync'));
    const redisCmds = [...wire.redis.counts.snapshot()].sort((x, y) => y[1] - x[1]);
    const redisTotal = redisCmds.reduce((s, [, v]) => s + v, 0);
    lines.push(
      `  wire (${role}): postgres statements/request ${(stmts / done).toFixed(2)} (syncs ${(syncs / done).toFixed(2)}); redis commands/request ${(redisTotal / done).toFixed(2)}`,
    );
    lines.push(`    redis (${role}): ${redisCmds.map(([k, v]) => `${k} ${(v / done).toFixed(2)}`).join(', ')}`);
  }
  return lines;
}
