/**
 * Test faults inside a gateway or worker process (ADR 0059). The harness alone loads this file's compiled
 * copy, with `--require` in NODE_OPTIONS and the faults in DOSSIER_TEST_FAULTS (withFaults); no app imports
 * it and the image never loads it, so production code has no test switch. It wraps the edges a fault
 * happens at: BullMQ's Queue.add/addBulk (an add held, a reply lost, a kill, an event's attempts), the pg driver's
 * query (a statement held in its transaction), and a lookup job's run (held before its fan-out to the
 * providers, or after its processor returned and before BullMQ completes it). Each fault says so on stderr
 * the first time it fires.
 */
import { existsSync } from 'node:fs';
import Module from 'node:module';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, Worker } from 'bullmq';
import { Client } from 'pg';
import { FAULTS_ENV, type FaultSpec } from './fault-spec';

type Method = (this: unknown, ...args: unknown[]) => unknown;
type Patchable = Record<string, unknown>;

const spec = JSON.parse(process.env[FAULTS_ENV] ?? '{}') as FaultSpec;
/** The compiled apps, beside this file's compiled copy (dist/libs/testing/src). */
const DIST = resolve(__dirname, '../../..');
const announced = new Set<string>();

function announce(fault: string): void {
  if (announced.has(fault)) return;
  announced.add(fault);
  process.stderr.write(`test fault: ${fault}\n`);
}

/** Replaces `target[name]` (a method) with what `wrap` makes of it; the wrapper's `faultWrapped` is the original. */
function wrapMethod(target: Patchable, name: string, wrap: (original: Method) => Method): void {
  const original = target[name];
  if (typeof original !== 'function') throw new Error(`test faults: no method ${name} to wrap`);
  target[name] = Object.defineProperty(wrap(original as Method), 'faultWrapped', { value: original });
}

/** Calls `patch` with a compiled app module's exports once the app has loaded it (requiring it first would change its start). */
function whenLoaded(file: string, patch: (exports: Patchable) => void): void {
  if (!existsSync(file)) throw new Error(`test faults: ${file} is missing (moved? move its fault with it)`);
  const loader = Module as unknown as { _load: Method };
  const load = loader._load;
  let patched = false;
  loader._load = function (this: unknown, ...args: unknown[]) {
    const exports = load.apply(this, args);
    const loaded = require.cache[file];
    // Once: the loads that were under way when it was loaded (its importers') come back through here too.
    if (!patched && loaded?.loaded) {
      patched = true;
      loader._load = load;
      patch(loaded.exports as Patchable);
    }
    return exports;
  };
}

const queueProto = Queue.prototype as unknown as Patchable;

if (spec.adds) {
  const { queues, holdMs, loseReplyMs } = spec.adds;
  wrapMethod(
    queueProto,
    'add',
    (add) =>
      async function (this: unknown, ...args: unknown[]) {
        if (!queues.includes((this as Queue).name)) return add.apply(this, args);
        if (holdMs !== undefined) {
          announce(`adds to ${queues.join(', ')} held ${holdMs} ms`);
          await sleep(holdMs);
        }
        const job = await add.apply(this, args);
        if (loseReplyMs === undefined) return job;
        announce(`replies to adds to ${queues.join(', ')} lost after ${loseReplyMs} ms`);
        await sleep(loseReplyMs);
        throw new Error('Command timed out (test fault: the reply to the add was lost)');
      },
  );
}

if (spec.killOnAdd) {
  const { queues } = spec.killOnAdd;
  const die = (queue: unknown): void => {
    if (!queues.includes((queue as Queue).name)) return;
    process.stderr.write(`test fault: killed at an add to ${(queue as Queue).name}\n`);
    process.kill(process.pid, 'SIGKILL');
  };
  for (const method of ['add', 'addBulk']) {
    wrapMethod(
      queueProto,
      method,
      (original) =>
        function (this: unknown, ...args: unknown[]) {
          die(this);
          return original.apply(this, args);
        },
    );
  }
}

if (spec.attempts) {
  const { queues, attempts } = spec.attempts;
  const withAttempts = (opts: unknown) => ({ ...(opts as object | undefined), attempts });
  wrapMethod(
    queueProto,
    'add',
    (add) =>
      function (this: unknown, name: unknown, data: unknown, opts: unknown) {
        if (!queues.includes((this as Queue).name)) return add.call(this, name, data, opts);
        announce(`jobs added to ${queues.join(', ')} get ${attempts} attempts`);
        return add.call(this, name, data, withAttempts(opts));
      },
  );
  wrapMethod(
    queueProto,
    'addBulk',
    (addBulk) =>
      function (this: unknown, jobs: unknown) {
        if (!queues.includes((this as Queue).name)) return addBulk.call(this, jobs);
        announce(`jobs added to ${queues.join(', ')} get ${attempts} attempts`);
        return addBulk.call(
          this,
          (jobs as { opts?: unknown }[]).map((j) => ({ ...j, opts: withAttempts(j.opts) })),
        );
      },
  );
}

if (spec.statements) {
  const rules = spec.statements;
  wrapMethod(
    Client.prototype as unknown as Patchable,
    'query',
    (query) =>
      function (this: unknown, ...args: unknown[]) {
        const config = args[0];
        const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
        const rule =
          typeof text === 'string' ? rules.find((r) => text.trimStart().startsWith(r.startsWith)) : undefined;
        if (!rule) return query.apply(this, args);
        announce(`statement "${rule.startsWith}" held ${rule.ms} ms`);
        if (args.some((a) => typeof a === 'function')) {
          setTimeout(() => query.apply(this, args), rule.ms);
          return undefined;
        }
        return sleep(rule.ms).then(() => query.apply(this, args));
      },
  );
}

if (spec.lookups?.at === 'before') {
  const { ms } = spec.lookups;
  // Inside the job's run, as a slow lookup: the worker counts it as running (its stall watchdog reads that).
  whenLoaded(resolve(DIST, 'apps/worker/src/fan-out/fan-out.js'), (exports) => {
    const fanOut = exports['FanOut'] as { prototype: Patchable } | undefined;
    if (!fanOut) throw new Error('test faults: fan-out.js exports no FanOut');
    wrapMethod(
      fanOut.prototype,
      'run',
      (run) =>
        async function (this: unknown, ...args: unknown[]) {
          announce(`lookups held ${ms} ms before their fan-out`);
          await sleep(ms);
          return run.apply(this, args);
        },
    );
  });
}

if (spec.lookups?.at === 'after') {
  const { queues, ms } = spec.lookups;
  wrapMethod(
    Worker.prototype as unknown as Patchable,
    'callProcessJob',
    (callProcessJob) =>
      async function (this: unknown, ...args: unknown[]) {
        const result = await callProcessJob.apply(this, args);
        if (!queues.includes((this as Worker).name)) return result;
        announce(`lookups held ${ms} ms after they ran, before BullMQ completes them`);
        await sleep(ms);
        return result;
      },
  );
}
