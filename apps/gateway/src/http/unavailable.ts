import { isRedisUnavailable } from '@dossier/runtime';
import { isDatabaseUnavailable } from '@dossier/persistence';

/** Whether an error means Postgres or Redis is unreachable, so the answer is `503 unavailable`, not `500`. */
export function isBackingServiceDown(err: unknown): boolean {
  return isDatabaseUnavailable(err) || isRedisUnavailable(err);
}
