import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { DIST, REPO_ROOT } from '@dossier/testing';
import { deferDateFormats } from './date-formats';

const REAL = Intl.DateTimeFormat;
const OPTIONS: Intl.DateTimeFormatOptions = { timeZone: 'UTC', dateStyle: 'full', timeStyle: 'long' };
const BUILT = join(REPO_ROOT, 'dist/libs/runtime/src/date-formats.js');
const INSTANT = Date.UTC(2026, 10, 23, 18, 30, 5);

describe('deferDateFormats', () => {
  afterEach(async () => {
    await nextTurn();
    Intl.DateTimeFormat = REAL;
  });

  it('hands out formatters that format, resolve and split exactly as the real ones', () => {
    deferDateFormats();
    expect(Intl.DateTimeFormat).not.toBe(REAL);
    const deferred = new Intl.DateTimeFormat('en-GB', OPTIONS);
    const real = new REAL('en-GB', OPTIONS);
    expect(deferred.format(INSTANT)).toBe(real.format(INSTANT));
    expect(deferred.formatToParts(INSTANT)).toEqual(real.formatToParts(INSTANT));
    expect(deferred.resolvedOptions()).toEqual(real.resolvedOptions());
    expect(deferred).toBeInstanceOf(REAL);
    // `format` is a getter returning a bound function: it works detached, as Nest's logger uses it.
    const { format } = deferred;
    expect(format(INSTANT)).toBe(real.format(INSTANT));
    // Called without `new`, and the constructor's own statics.
    expect(Intl.DateTimeFormat('de-DE', OPTIONS).format(INSTANT)).toBe(new REAL('de-DE', OPTIONS).format(INSTANT));
    expect(Intl.DateTimeFormat.supportedLocalesOf(['en-GB'])).toEqual(['en-GB']);
  });

  it('raises an invalid option at first use, with the real error', () => {
    deferDateFormats();
    const deferred = new Intl.DateTimeFormat('en-GB', { timeZone: 'Not/AZone' });
    expect(() => deferred.format(INSTANT)).toThrow(RangeError);
  });

  it('puts the real constructor back at the next turn of the event loop, and a second call changes nothing', async () => {
    deferDateFormats();
    const deferring = Intl.DateTimeFormat;
    deferDateFormats();
    expect(Intl.DateTimeFormat).toBe(deferring);
    await nextTurn();
    expect(Intl.DateTimeFormat).toBe(REAL);
    expect(new Intl.DateTimeFormat('en-GB', OPTIONS)).toBeInstanceOf(REAL);
  });

  it("keeps Nest's import-time formatters from paging ICU's data into the process", () => {
    // In a fresh process (ICU's pages stay once touched), running the build of this module: file-backed
    // RSS before and after importing @nestjs/common, with and without the deferral. Measured: 14,384
    // against 8,448 KiB (ADR 0030).
    const script = (defer: boolean): string => `
      const rssFile = () => Number(/RssFile:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]);
      ${defer ? `require(${JSON.stringify(BUILT)}).deferDateFormats();` : ''}
      require('reflect-metadata');
      const before = rssFile();
      require('@nestjs/common');
      process.stdout.write(String(rssFile() - before));`;
    const grownKiB = (defer: boolean): number =>
      Number(execFileSync(process.execPath, ['-e', script(defer)], { cwd: REPO_ROOT }));
    expect(grownKiB(false) - grownKiB(true)).toBeGreaterThan(2048);
  });

  it.each(['gateway', 'worker'] as const)(
    "the %s's built entry point defers them before Nest loads, with nothing but reflect-metadata loaded first",
    (app) => {
      // Stops the app at its first require of @nestjs/common and reports what had happened by then.
      const script = `
        const Module = require('node:module');
        const real = Intl.DateTimeFormat;
        const load = Module._load;
        Module._load = function (request, ...rest) {
          if (request === '@nestjs/common') {
            const packages = Object.keys(require.cache)
              .filter((file) => file.includes('/node_modules/'))
              .map((file) => file.split('/node_modules/').pop().split('/')[0]);
            process.stdout.write(JSON.stringify({ deferred: Intl.DateTimeFormat !== real, packages: [...new Set(packages)] }));
            process.exit(0);
          }
          return load.call(this, request, ...rest);
        };
        require(${JSON.stringify(DIST[app])});`;
      const seen = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: REPO_ROOT, encoding: 'utf8' }));
      expect(seen).toEqual({ deferred: true, packages: ['reflect-metadata'] });
    },
  );
});
