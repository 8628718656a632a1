import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every `*.json` file of a fixtures folder (`…/fixtures/ok`, `…/fixtures/not-ok`), parsed, in file-name order. */
export function readFixtures<T>(folder: string): T[] {
  return readdirSync(folder)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => JSON.parse(readFileSync(join(folder, file), 'utf8')) as T);
}
