/**
 * The HTTP load generator: one POST at a time per loop, in the bench process, over node:http with a
 * keep-alive Agent (`--client http`) or the global fetch (`--client fetch`).
 */
import http from 'node:http';
import type { Outcome } from './drive';

/** The gateway answers 202 after SYNC_WAIT_DEFAULT_S (10 s) at the latest: anything slower is broken. */
const REQUEST_TIMEOUT_MS = 30_000;

export type LoadClient = 'http' | 'fetch';

export interface Poster {
  post(body: Buffer, apiKey: string): Promise<{ status: number; text: string }>;
  close(): void;
}

/** A poster of JSON bodies with a bearer key to `baseUrl` + `path`. */
export function poster(client: LoadClient, baseUrl: string, path: string, inflight: number): Poster {
  return client === 'http' ? httpPoster(baseUrl, path, inflight) : fetchPoster(baseUrl, path);
}

/** What the report says about the load generator. */
export function loadGenDescription(client: LoadClient): string {
  return client === 'http'
    ? 'load generator: node:http request() with a keep-alive Agent (maxSockets = in-flight), in the bench process'
    : 'load generator: global fetch (undici), in the bench process';
}

function httpPoster(baseUrl: string, path: string, inflight: number): Poster {
  const u = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: inflight, maxFreeSockets: inflight });
  const post: Poster['post'] = (body, apiKey) =>
    new Promise((resolvePost, reject) => {
      const req = http.request(
        {
          host: u.hostname,
          port: u.port,
          path,
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            authorization: `Bearer ${apiKey}`,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolvePost({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          res.on('error', reject);
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  return { post, close: () => agent.destroy() };
}

function fetchPoster(baseUrl: string, path: string): Poster {
  const url = `${baseUrl}${path}`;
  return {
    post: async (body, apiKey) => {
      const res = await fetch(url, {
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body,
      });
      return { status: res.status, text: await res.text() };
    },
    close: () => undefined,
  };
}

/**
 * One POST per call, cycling through `bodies` and the accounts' `keys`: a success is a 200 with the
 * `success` envelope; anything else fails with its status and error code.
 */
export function postOp(load: Poster, bodies: Buffer[], keys: string[]): (i: number) => Promise<Outcome> {
  return async (i) => {
    const res = await load.post(bodies[i % bodies.length]!, keys[i % keys.length]!);
    if (res.status !== 200) return `HTTP ${res.status} ${errorCode(res.text)}`;
    // cheaper than JSON.parse on every answer, and exact for this envelope (status is the first key)
    return res.text.startsWith('{"status":"success"') ? true : `HTTP 200 but ${res.text.slice(0, 40)}`;
  };
}

/** The error envelope's code (or status), else the start of the body. */
export function errorCode(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { code?: string }; status?: string };
    return String(body.error?.code ?? body.status);
  } catch {
    return text.slice(0, 60);
  }
}
