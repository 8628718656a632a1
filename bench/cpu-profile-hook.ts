/**
 * Preloaded by the bench (`node -r dist/bench/cpu-profile-hook.js <app>`, see apps.ts) when it runs
 * with --profile: the first SIGWINCH starts the V8 CPU profiler, the second stops it and writes
 * `<cwd>/<pid>.cpuprofile` (open it in Chrome DevTools, or `node dist/bench/profile-summary.js`).
 * So only the measured window is profiled — no boot, no warm-up, no shutdown. The file appears
 * whole (written aside, then renamed): the bench waits for it to exist.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const session = new Session();
session.connect();
let running = false;

function post<T>(method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) =>
    session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result as T))),
  );
}

process.on('SIGWINCH', () => {
  if (!running) {
    running = true;
    void post('Profiler.enable')
      .then(() => post('Profiler.setSamplingInterval', { interval: 500 }))
      .then(() => post('Profiler.start'))
      .catch((err: unknown) => console.error(`cpu-profile-hook: could not start: ${String(err)}`));
    return;
  }
  running = false;
  post<{ profile: unknown }>('Profiler.stop').then(
    ({ profile }) => {
      const file = join(process.cwd(), `${process.pid}.cpuprofile`);
      writeFileSync(`${file}.part`, JSON.stringify(profile));
      renameSync(`${file}.part`, file);
      console.error(`cpu-profile-hook: wrote ${file}`);
    },
    (err: unknown) => console.error(`cpu-profile-hook: could not stop: ${String(err)}`),
  );
});
