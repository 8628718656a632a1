const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * Whether an error means a backing service (Postgres, Redis) is unreachable or unhealthy, so the
 * right answer is `503 unavailable` rather than `500`. Pure inspection of the error's shape.
 */
export function isInfrastructureError(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 4) return false;
  const e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; driverError?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (NETWORK_CODES.has(code)) return true;
  // Postgres: connection exceptions (08xxx), shutdown / cannot connect now (57P0x), too many connections.
  if (/^08/.test(code) || /^57P0/.test(code) || code === '53300') return true;
  if (e.name === 'MaxRetriesPerRequestError') return true;
  if (
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Stream isn't writeable|Connection is closed|Command timed out|enableOfflineQueue|Client has encountered a connection error/i.test(
      message,
    )
  ) {
    return true;
  }
  return isInfrastructureError(e.driverError, depth + 1) || isInfrastructureError(e.cause, depth + 1);
}
