/**
 * The HTTP floor's front, run by the bench (http-floor.ts) as its own process: a bare Fastify server
 * whose `POST /v1/verify/phone` does the raw round trip (floor-jobs.ts: Queue.add, the no-op worker,
 * the completion event) for the body's `phone` and answers a small success envelope. No auth, no
 * credits, no Postgres, no validation beyond a string `phone`: what any gateway on this stack does at
 * the least for each lookup, so its rate is a ceiling for the end-to-end path's. With --database-url it is
 * the durable floor's front (ADR 0076): each lookup is reserved (floor-ledger.ts) before its job is queued,
 * and answered with the balance its settle reported.
 *
 *   node dist/bench/http-floor-front.js --redis-url redis://127.0.0.1:6379 --prefix P --port N [--database-url U]
 *
 * `GET /health/ready` answers 200 once the queue and its events are ready; closes on SIGTERM/SIGINT.
 */
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { runBenchProcess } from './bench-process';
import { FloorProducer } from './floor-jobs';
import { FloorLedger } from './floor-ledger';

const { values } = parseArgs({
  options: {
    'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379' },
    prefix: { type: 'string' },
    port: { type: 'string' },
    'database-url': { type: 'string' },
  },
  strict: true,
});

runBenchProcess(async () => {
  if (!values.prefix || !values.port) throw new Error('--prefix and --port are required');
  const producer = new FloorProducer(values['redis-url'], values.prefix);
  await producer.waitUntilReady();
  const url = values['database-url'];
  const ledger = url === undefined ? null : await FloorLedger.open(url, 'front');
  const runId = `f${Date.now().toString(36)}`;
  let next = 0;
  const app = Fastify({ logger: false });
  app.get('/health/ready', () => 'ok');
  app.post('/v1/verify/phone', async (req, reply) => {
    const phone = (req.body as { phone?: unknown } | null)?.phone;
    if (typeof phone !== 'string') {
      return reply.code(400).send({ status: 'error', error: { code: 'validation_error', message: 'phone' } });
    }
    const id = `${runId}-${next++}`;
    if (ledger && !(await ledger.reserve(id, phone))) {
      return reply.code(402).send({ status: 'error', error: { code: 'insufficient_credits', message: 'floor' } });
    }
    const outcome = await producer.roundTrip(id, phone);
    if (typeof outcome === 'string') {
      return reply.code(502).send({ status: 'error', error: { code: 'upstream_error', message: outcome } });
    }
    return { status: 'success', search_id: id, results: [], credits_remaining: balanceOf(outcome.returnvalue) };
  });
  await app.listen({ host: '127.0.0.1', port: Number(values.port) });
  return async () => {
    await app.close();
    await producer.close();
    await ledger?.close();
  };
});

/** The balance a durable floor's worker reported (its return value's `outcome.balance`); 0 for the plain floor's. */
function balanceOf(returnvalue: unknown): number {
  const value: unknown = typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue;
  const balance = (value as { outcome?: { balance?: unknown } } | null)?.outcome?.balance;
  return typeof balance === 'number' ? balance : 0;
}
