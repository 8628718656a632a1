import { resolve } from 'node:path';
import { REPO_ROOT } from './repo-root';

export type Dossier = 'gateway' | 'worker' | 'cli';

/** The compiled entry point each app runs from (the image's WORKDIR is the repository root's layout). */
export const ENTRY_POINTS: Readonly<Record<Dossier, string>> = {
  gateway: 'dist/apps/gateway/src/main.js',
  worker: 'dist/apps/worker/src/main.js',
  cli: 'dist/apps/cli/src/main.js',
};

/** The same entry points as absolute paths (`npm run build`), which the tests and the bench start as processes. */
export const DIST: Readonly<Record<Dossier, string>> = {
  gateway: resolve(REPO_ROOT, ENTRY_POINTS.gateway),
  worker: resolve(REPO_ROOT, ENTRY_POINTS.worker),
  cli: resolve(REPO_ROOT, ENTRY_POINTS.cli),
};
