/** LOG_LEVEL → the Nest logger levels at or above it (structurally Nest's LogLevel[]). */
export function logLevels(level: 'debug' | 'info' | 'warn' | 'error'): ('error' | 'warn' | 'log' | 'debug')[] {
  const order = ['error', 'warn', 'log', 'debug'] as const;
  const upto = { error: 0, warn: 1, info: 2, debug: 3 }[level];
  return order.slice(0, upto + 1);
}
