import pino, { type Logger } from 'pino';
import { createRequire } from 'node:module';
import path from 'node:path';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * What never reaches a log line, wherever it sits in a logged object: credentials (the Authorization
 * header, cookies, passwords, API keys, secrets) and what a client sent (bodies, lookup inputs).
 * The code logs none of these on purpose; this is the net under that rule.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]',
  'req.body',
  'res.body',
  'body',
  'input',
  'password',
  'passwort',
  'new_password',
  'api_key',
  'secret',
  'webhook_secret',
  'token',
  '*.body',
  '*.input',
  '*.password',
  '*.passwort',
  '*.new_password',
  '*.api_key',
  '*.secret',
  '*.webhook_secret',
  '*.token',
  '*.authorization',
  '*.Authorization',
];

/**
 * The process's one pino logger: JSON lines on stdout (level as a label, ISO time, `service` on every
 * line), or pino-pretty's coloured lines — with `LOG_FORMAT=auto` (the default) when stdout is a
 * terminal. `LOG_LEVEL` sets the level. `destination` replaces stdout (tests).
 */
export function createRootLogger(
  service: string,
  level: LogLevel,
  options: { format?: LogFormat; destination?: pino.DestinationStream } = {},
): Logger {
  const format = options.format ?? 'auto';
  const pretty = format === 'pretty' || (format === 'auto' && process.stdout.isTTY === true);
  const settings: pino.LoggerOptions = {
    level,
    base: { service, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return pretty
    ? pino(
        settings,
        prettyStream()({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' }),
      )
    : options.destination
      ? pino(settings, options.destination)
      : pino(settings);
}

/**
 * pino-pretty, loaded only when a terminal reads the logs (29 modules a deployment never needs). Jest
 * runs the sources as ES modules, without __filename, from the repository root.
 */
function prettyStream(): typeof import('pino-pretty') {
  const from = typeof __filename === 'string' ? __filename : path.join(process.cwd(), 'package.json');
  return createRequire(from)('pino-pretty') as typeof import('pino-pretty');
}
