import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { FAULTS_ENV } from './fault-spec';
import { FAULT_PRELOAD, withFaults } from './faults';
import { REPO_ROOT } from './repo-root';

const dist = (path: string) => resolve(REPO_ROOT, 'dist', path);

/** Runs `script` in a node started as withFaults starts an app; what it printed, parsed. */
function inFaultyProcess(faults: Parameters<typeof withFaults>[0], script: string): unknown {
  const out = execFileSync(process.execPath, ['-e', script], {
    env: { PATH: process.env['PATH'] ?? '', ...withFaults(faults) },
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

/** How many fault wrappers a method is under. */
const DEPTH = `const depth = (f) => { let n = 0; while (f.faultWrapped) { n++; f = f.faultWrapped; } return n; };`;

describe('the fault preload (loaded by withFaults only)', () => {
  it('is started through NODE_OPTIONS with the faults in their own variable', () => {
    const env = withFaults({ holdEnqueueMs: 5, webhookAttempts: 2 });
    expect(env['NODE_OPTIONS']).toBe(`--require ${JSON.stringify(FAULT_PRELOAD)}`);
    expect(JSON.parse(env[FAULTS_ENV]!)).toEqual({
      adds: { queues: ['person-lookup', 'company-lookup', 'email-lookup', 'phone-lookup'], holdMs: 5 },
      attempts: { queues: ['webhook-delivery'], attempts: 2 },
    });
  });

  it("wraps the worker's fan-out once, when the worker loads it, not before", () => {
    const fanOut = dist('apps/worker/src/fan-out/fan-out.js');
    const script = `${DEPTH}
      const before = ${JSON.stringify(fanOut)} in require.cache;
      require(${JSON.stringify(dist('apps/worker/src/processors/lookup.processor.js'))});
      const run = require(${JSON.stringify(fanOut)}).FanOut.prototype.run;
      console.log(JSON.stringify({ before, depth: depth(run) }));`;
    expect(inFaultyProcess({ holdLookups: { at: 'before', ms: 1 } }, script)).toEqual({ before: false, depth: 1 });
  });

  it('wraps only the edges its faults name', () => {
    const script = `${DEPTH}
      const { Queue, Worker } = require('bullmq');
      const { Client } = require('pg');
      console.log(JSON.stringify([Queue.prototype.add, Queue.prototype.addBulk, Client.prototype.query,
        Worker.prototype.callProcessJob].map(depth)));`;
    expect(inFaultyProcess({}, script)).toEqual([0, 0, 0, 0]);
    expect(
      inFaultyProcess(
        { loseEnqueueReplyMs: 1, webhookAttempts: 1, holdBatchVoidMs: 1, holdLookups: { at: 'after', ms: 1 } },
        script,
      ),
    ).toEqual([2, 1, 1, 1]);
  });
});
