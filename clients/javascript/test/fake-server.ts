/**
 * A scripted stand-in for the Dossier gateway on 127.0.0.1 (random port), built on node:http.
 * Every request is recorded; the handler decides the reply.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client, EmailResult } from '../src/index.js';

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, the raw text when not JSON, or undefined when empty. */
  body: unknown;
  rawBody: string;
  at: number;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Send this text as the body instead of JSON. */
  text?: string;
  /** Close the connection without answering. */
  destroy?: boolean;
  /** Wait this long before answering. */
  delayMs?: number;
}

export type Handler = (req: Recorded, index: number) => Reply | Promise<Reply>;

export interface FakeServer {
  url: string;
  port: number;
  requests: Recorded[];
  close(): Promise<void>;
}

export async function startFake(handler: Handler, port = 0): Promise<FakeServer> {
  const requests: Recorded[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        if (rawBody !== '') {
          try {
            body = JSON.parse(rawBody);
          } catch {
            body = rawBody;
          }
        }
        const recorded: Recorded = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body,
          rawBody,
          at: Date.now(),
        };
        requests.push(recorded);
        const reply = await handler(recorded, requests.length - 1);
        if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
        if (reply.destroy) {
          req.socket.destroy();
          return;
        }
        if (res.destroyed) return;
        const payload = reply.text ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
        res.writeHead(reply.status, {
          'Content-Type': reply.text !== undefined ? 'text/html' : 'application/json; charset=utf-8',
          'X-Request-Id': `req_fake${requests.length}`,
          ...reply.headers,
        });
        res.end(payload);
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs `run` against a fake server answering with `handler`, then closes it. */
export async function withFake<T>(handler: Handler, run: (fake: FakeServer) => Promise<T>): Promise<T> {
  const fake = await startFake(handler);
  try {
    return await run(fake);
  } finally {
    await fake.close();
  }
}

/** An API key for the unit tests (the fake server accepts any). */
export const UNIT_KEY = 'dsk_unit_test_key_0123456789abcdefghij';

/** Answers with the given replies in order, then repeats the last one. */
export function sequence(...replies: Reply[]): Handler {
  return (_req, index) => replies[Math.min(index, replies.length - 1)]!;
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function freePort(): Promise<number> {
  const fake = await startFake(() => ({ status: 200 }));
  await fake.close();
  return fake.port;
}

export const errorBody = (code: string, message: string, details?: { field: string; issue: string }[]) => ({
  status: 'error',
  error: { code, message, ...(details ? { details } : {}) },
  request_id: `req_${code}`,
});

export const success = (results: unknown[] = [], credits = 99, searchId = 'srch_ok1') => ({
  status: 'success',
  search_id: searchId,
  results,
  credits_remaining: credits,
  sources: [{ provider: 'libphonenumber', outcome: 'found', took_ms: 1 }],
});

export const pending = (searchId = 'srch_pend1', credits = 98) => ({
  status: 'pending',
  search_id: searchId,
  credits_remaining: credits,
});

export const PHONE_RESULT = {
  input: '+14155552671',
  e164: '+14155552671',
  valid: true,
  validation_errors: [],
  possible: true,
  country_code: '1',
  region: 'US',
  location: 'San Francisco, CA',
  carrier: null,
  line_type: 'fixed_line_or_mobile',
  time_zones: ['America/Los_Angeles'],
  national_format: '(415) 555-2671',
  international_format: '+1 415 555 2671',
  sources: ['libphonenumber'],
};

/** An e-mail item as the gateway answers it (the SMTP probe's facts, score and sub-status: ADR 0057). */
export const EMAIL_RESULT = {
  email: 'Grace.Hopper@Example.org',
  normalized: 'Grace.Hopper@example.org',
  syntax_valid: true,
  domain: 'example.org',
  mx_records: ['mx1.example.org'],
  deliverability: 'risky',
  reason: 'mx1.example.org accepts mail for any address at example.org (catch-all)',
  disposable: false,
  free_provider: false,
  role_account: false,
  did_you_mean: null,
  accounts: [],
  sources: ['smtp', 'email'],
  is_catch_all: true,
  has_full_inbox: false,
  is_disabled: false,
  can_connect_smtp: true,
  score: 50,
  sub_status: 'catch_all',
} satisfies EmailResult;

/** Fast retry settings for tests. */
export const FAST = { retryBaseDelayMs: 5, retryMaxDelayMs: 20, pollIntervalMs: 10 } as const;

/** What a `fakeClock` saw: every sleep asked for (ms) with its signal, and the time it reads now. */
export interface FakeClock {
  sleeps: number[];
  signals: (AbortSignal | undefined)[];
  now: number;
}

/**
 * Puts a fake clock in the client (no test measures the wall clock): a sleep returns at once, recorded,
 * and moves the clock on by what it was asked for; `onSleep` runs first (to abort, for instance). The time
 * the requests take does not move it, so a deadline is reached by the sleeps alone.
 */
export function fakeClock(client: Client, onSleep?: (ms: number, signal?: AbortSignal) => Promise<void>): FakeClock {
  const seen: FakeClock = { sleeps: [], signals: [], now: 1_000_000 };
  client['transport'].clock = {
    now: () => seen.now,
    sleep: async (ms, signal) => {
      seen.sleeps.push(ms);
      seen.signals.push(signal);
      if (onSleep) await onSleep(ms, signal);
      seen.now += ms;
    },
  };
  return seen;
}
