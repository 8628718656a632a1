import { resolve } from 'node:path';
import { REPO_ROOT } from './repo-root';

/** The compiled apps (`npm run build`), which the tests and the bench start as processes. */
export const DIST = {
  gateway: resolve(REPO_ROOT, 'dist/apps/gateway/src/main.js'),
  worker: resolve(REPO_ROOT, 'dist/apps/worker/src/main.js'),
  cli: resolve(REPO_ROOT, 'dist/apps/cli/src/main.js'),
};
