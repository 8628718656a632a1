import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The repository root: the folder with nest-cli.json at or above this module (its source, or its
 * compiled copy under dist/ when the bench imports it), or above the working directory where modules
 * have no `__dirname` (Jest runs them as ESM; npm scripts run from the root).
 */
export const REPO_ROOT = ((): string => {
  const start = typeof __dirname === 'string' ? __dirname : process.cwd();
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'nest-cli.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no nest-cli.json at or above ${start}`);
  }
})();
