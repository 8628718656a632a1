import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction, type TcpNetConnectOpts } from 'node:net';
import type { ResolvedTarget } from '@dossier/contracts';

export type PostResult = { statusCode: number; error: null } | { statusCode: number | null; error: string };

/** A failed attempt's error for a receiver's non-2xx status; a 3xx says why its Location was not followed. */
function answered(code: number): string {
  return code >= 300 && code < 400 ? `answered ${code} (redirects are not followed)` : `answered ${code}`;
}

/** How many of the addresses tried a failed attempt's error names, each with how it failed: the rest are counted. */
const NAMED_ADDRESSES = 4;

/**
 * A failed connection's recorded error: its code; when every address was tried (autoSelectFamily's
 * AggregateError, with Node's code for the whole), also that all failed and how each did, bounded by
 * naming at most NAMED_ADDRESSES of them.
 */
function connectionError(err: NodeJS.ErrnoException & { errors?: unknown }): string {
  const code = err.code ?? err.message;
  // By shape, not instanceof: the error is made in Node's own realm (not a test VM's AggregateError).
  if (!Array.isArray(err.errors)) return code;
  const tries = (err.errors as (NodeJS.ErrnoException & { address?: string })[]).map(
    (e) => `${e.address ?? '?'} ${e.code ?? 'error'}`,
  );
  const more = tries.length - NAMED_ADDRESSES;
  const named = tries.slice(0, NAMED_ADDRESSES).join(', ') + (more > 0 ? ` and ${more} more` : '');
  return `${code} (all ${tries.length} addresses failed: ${named})`;
}

/**
 * POSTs the body to the checked target, connecting to the addresses that were checked (never resolving the
 * name again: a DNS answer that changes after the check cannot redirect the request), with the URL's host
 * as Host header and TLS server name. When one refuses the connection or has not connected within 250 ms,
 * the next is tried, families alternating (Node's autoSelectFamily, as its fetch does; the last one has the
 * rest of the deadline): a dead address among a name's records fails no attempt while another answers.
 * Redirects are not followed; only the status is read. Ends when
 * `deadline` aborts: by default `timeoutMs` from now; a delivery passes its attempt's, which began before
 * the host was resolved, so the lookup, the connection and the answer share one `timeoutMs`.
 */
export function postPinned(
  target: ResolvedTarget,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  deadline: AbortSignal = AbortSignal.timeout(timeoutMs),
): Promise<PostResult> {
  const { url, addresses } = target;
  const pinned: LookupFunction = (_host, options, callback) => {
    if (options.all) (callback as (e: null, a: typeof addresses) => void)(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
  // The request's options reach net.connect, autoSelectFamily among them (http's types leave it out).
  const options: https.RequestOptions & Pick<TcpNetConnectOpts, 'autoSelectFamily'> = {
    method: 'POST',
    agent: false,
    lookup: pinned,
    // Set, not left to the runtime's default (--no-network-family-autoselection turns it off): without it
    // only the first address would be tried.
    autoSelectFamily: true,
    headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), ...headers },
    ...(url.protocol === 'https:' && !isIP(url.hostname.replace(/^\[(.*)\]$/, '$1'))
      ? { servername: url.hostname }
      : {}),
  };
  const late: PostResult = { statusCode: null, error: `no answer within ${timeoutMs} ms` };
  if (deadline.aborted) return Promise.resolve(late);
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: PostResult) => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    const req = (url.protocol === 'https:' ? https : http).request(url, options, (res) => {
      // The status decides; none of the body is read. Drained to its end, a receiver's endless or huge answer
      // would be read at full speed until the deadline, after the attempt was over (its slot freed for the
      // next), by the process that runs lookups too; the connection (never reused: no agent) ends here.
      deadline.removeEventListener('abort', onDeadline);
      const code = res.statusCode ?? 0;
      done(code >= 200 && code < 300 ? { statusCode: code, error: null } : { statusCode: code, error: answered(code) });
      res.destroy();
    });
    const onDeadline = (): void => {
      done(late);
      req.destroy();
    };
    deadline.addEventListener('abort', onDeadline, { once: true });
    req.on('error', (err: NodeJS.ErrnoException) => {
      deadline.removeEventListener('abort', onDeadline);
      done({ statusCode: null, error: connectionError(err) });
    });
    req.end(body);
  });
}
