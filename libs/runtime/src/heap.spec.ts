import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '@dossier/testing';
import { APP_NODE_FLAGS, appNodeFlags } from './heap';

const BUILT = join(REPO_ROOT, 'dist/libs/runtime/src/heap.js');

/**
 * In a fresh process running the build of heap.ts: 2,000 functions run often enough to get baseline
 * code, then sit unused while the process allocates through at least 12 full collections. Reports
 * V8's code space before and after, in KiB.
 */
function codeSpaceKiB(nodeArgs: string[]): { warm: number; after: number; majors: number } {
  const script = `
    const v8 = require('node:v8');
    const { PerformanceObserver, constants } = require('node:perf_hooks');
    require(${JSON.stringify(BUILT)}).tuneHeap(10);
    const fns = Array.from({ length: 2000 }, (_, i) => new Function('a', 'let s = 0; for (let j = 0; j < a; j++) s += j * ' + i + '; return s;'));
    for (let round = 0; round < 200; round++) for (const f of fns) f(3);
    const used = () => Math.round(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'code_space').space_used_size / 1024);
    const warm = used();
    let majors = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors += 1;
    }).observe({ entryTypes: ['gc'] });
    let garbage = [];
    const until = Date.now() + 30000;
    (function churn() {
      for (let i = 0; i < 20000; i++) garbage.push({ i });
      if (garbage.length > 400000) garbage = [];
      if (majors < 12 && Date.now() < until) return setImmediate(churn);
      process.stdout.write(JSON.stringify({ warm, after: used(), majors, kept: fns.length }));
    })();`;
  return JSON.parse(execFileSync(process.execPath, [...nodeArgs, '-e', script], { cwd: REPO_ROOT, encoding: 'utf8' }));
}

describe('tuneHeap', () => {
  it('flushes the baseline code of functions that stopped running (ADR 0032)', () => {
    const { warm, after, majors } = codeSpaceKiB([]);
    expect(majors).toBeGreaterThanOrEqual(12);
    expect(warm).toBeGreaterThan(512);
    expect(after).toBeLessThan(warm / 4);
  });

  it.each(['--no-flush-baseline-code', '--noflush_baseline_code'])(
    'leaves baseline code alone when the command line says %s',
    (flag) => {
      const { warm, after, majors } = codeSpaceKiB([flag]);
      expect(majors).toBeGreaterThanOrEqual(12);
      expect(after).toBeGreaterThan(warm / 2);
    },
  );
});

describe('collectOnce (ADR 0075)', () => {
  it('runs a full collection and leaves gc unexposed, to the process and to contexts made after', () => {
    const script = `
      const vm = require('node:vm');
      const { collectOnce } = require(${JSON.stringify(BUILT)});
      let ref;
      (() => { ref = new WeakRef({ held: new Array(1000).fill(1) }); })();
      // A WeakRef's target is kept until the end of the turn that made it.
      setImmediate(() => {
        collectOnce();
        console.log(JSON.stringify({ cleared: ref.deref() === undefined, own: typeof gc, fresh: vm.runInNewContext('typeof gc') }));
      });`;
    const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ cleared: true, own: 'undefined', fresh: 'undefined' });
  });
});

describe('appNodeFlags (ADR 0029, ADR 0033)', () => {
  const FRAME = '--experimental-async-context-frame';

  it('asks Node 22 and 23 for async context frames, and not Node 24 and later, which have them and refuse the flag', () => {
    for (const version of ['22.22.3', '22.23.3', '23.11.1']) expect(appNodeFlags(version)).toContain(FRAME);
    for (const version of ['24.0.0', '24.21.0', '26.10.0']) expect(appNodeFlags(version)).not.toContain(FRAME);
    for (const version of ['22.23.3', '24.21.0']) expect(appNodeFlags(version)).toContain('--max-semi-space-size=8');
  });

  it("gives this Node flags it accepts, under which AsyncLocalStorage needs no promise hook and keeps a request's store", () => {
    // The hook-based AsyncLocalStorage propagates its store from a promise hook (`_propagate`); the
    // frame-based one has no such method. Either way the store must survive awaits and timers.
    const script = `
      const { AsyncLocalStorage } = require('node:async_hooks');
      const storage = new AsyncLocalStorage();
      const seen = [];
      storage.run({ request: 'r1' }, async () => {
        await Promise.resolve();
        seen.push(storage.getStore().request);
        await new Promise((resolve) => setTimeout(resolve, 1));
        seen.push(storage.getStore().request);
        process.stdout.write(JSON.stringify({ hooked: typeof storage._propagate === 'function', seen }));
      });`;
    const out = execFileSync(process.execPath, [...APP_NODE_FLAGS, '-e', script], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ hooked: false, seen: ['r1', 'r1'] });
  });
});
