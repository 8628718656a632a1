#!/usr/bin/env node
/**
 * `npm test`'s Jest step: two lanes at once, each one suite at a time.
 *
 *   - e2e: `test/**\/*.e2e-spec.ts`, which start the apps as processes and mostly wait on them;
 *   - the rest: unit and integration suites, mostly Jest's own CPU.
 *
 * At most one e2e suite runs at a time (their apps never share the two cores with another e2e suite's),
 * and the wall time is about the longer lane rather than the sum. The e2e lane prints as it goes; the
 * other lane's output is kept and printed after it, so neither log is interleaved. Each lane has its own
 * global setup (database and queue prefix). Exits non-zero when either lane fails.
 *
 * Arguments go to both lanes (`npm test -- --testNamePattern x`).
 */
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const JEST = [
  '--experimental-vm-modules',
  '--disable-warning=ExperimentalWarning',
  join(ROOT, 'node_modules/jest/bin/jest.js'),
  // One suite at a time, in one worker process that jest replaces when it grows (workerIdleMemoryLimit in
  // jest.config.js); --runInBand would keep every suite's leftovers in this lane's own process.
  '--maxWorkers=1',
];
const E2E = 'test/.*\\.e2e-spec\\.ts$';
const args = process.argv.slice(2);

function lane(name, laneArgs, live, niceness = 0) {
  const started = Date.now();
  const command = [process.execPath, ...JEST, ...laneArgs, ...args];
  const [file, ...argv] = niceness > 0 ? ['nice', '-n', String(niceness), ...command] : command;
  const child = spawn(file, argv, {
    cwd: ROOT,
    stdio: live ? 'inherit' : ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  if (!live) {
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
  }
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  return new Promise((res) =>
    child.on('exit', (code, signal) =>
      res({ name, code: code ?? (signal ? 1 : 0), output, seconds: Math.round((Date.now() - started) / 1000) }),
    ),
  );
}

// The unit and integration suites yield the cores (nice): the e2e suites' apps (a worker killed and its job
// redelivered, a graceful stop) keep the timing they have when they run alone.
const rest = lane('unit and integration', ['--testPathIgnorePatterns', E2E], false, 15);
const e2e = lane('e2e', ['--testPathPatterns', E2E], true);
const lanes = [await e2e, await rest];
const other = lanes[1];
console.log(`\n== the ${other.name} lane's output\n`);
process.stdout.write(other.output);
console.log('');
for (const l of lanes)
  console.log(`== ${l.name}: ${l.code === 0 ? 'passed' : `FAILED (exit ${l.code})`} in ${l.seconds} s`);
process.exit(lanes.some((l) => l.code !== 0) ? 1 : 0);
