import { connect, isIP, type Socket } from 'node:net';
import { DEFAULT_CIPHERS, connect as connectTls } from 'node:tls';

/** One SMTP reply (RFC 5321 §4.2): its code, the enhanced status code when given (RFC 3463), every line's text. */
export interface SmtpReply {
  code: number;
  enhanced: string | null;
  lines: string[];
}

/**
 * The connection could not be made: the next mail host may be tried. `timedOut`: nothing answered it before
 * its deadline (rather than a refusal or an unreachable network).
 */
export class ConnectFailure extends Error {
  override readonly name = 'ConnectFailure';
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/**
 * The session broke after it was made (the server hung, closed or spoke something else than SMTP, or TLS
 * failed). `timedOut`: the server stopped answering and the session's budget ran out.
 */
export class SessionFailure extends Error {
  override readonly name = 'SessionFailure';
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/** Longest reply accepted; a server sending more is not speaking SMTP to us. */
const MAX_REPLY_CHARS = 16 * 1024;

const CONNECT_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
};

/**
 * The TLS a STARTTLS handshake accepts: any version from TLS 1.0, at OpenSSL's security level 0 (at level 1,
 * OpenSSL 3's default, TLS 1.0 and 1.1 cannot sign their handshake, nor can a 1024-bit key). With Node's
 * defaults (TLS 1.2 at least) an old mail host fails the handshake and cannot be asked at all; the probe's
 * TLS is opportunistic (RFC 7435, ADRs 0037 and 0041): old TLS is better than none. The newest version both
 * sides speak is still the one used; Node's cipher list is kept (no RC4, DES, MD5, export or null ciphers).
 */
const OPPORTUNISTIC_TLS = { minVersion: 'TLSv1', ciphers: `${DEFAULT_CIPHERS}:@SECLEVEL=0` } as const;

/**
 * A client side of one SMTP session over `node:net`, one command at a time (no pipelining): it only ever
 * speaks the envelope commands of a mailbox probe, in plain text, or over TLS once `startTls` has turned
 * the connection (after the server's 220 to STARTTLS). The whole session shares one budget (`budget`: the
 * per-connection timeout and the lookup's deadline), the TLS handshake included; when it runs out the
 * socket is destroyed and the pending read (or handshake) fails.
 */
export class SmtpSession {
  private buffer = '';
  private lines: string[] = [];
  private waiting: { resolve: (reply: SmtpReply) => void; reject: (error: Error) => void } | null = null;
  /** The pending TLS handshake's rejection, while one is under way. */
  private handshake: ((error: Error) => void) | null = null;
  private failure: Error | null = null;
  /** What is read and written: the TCP socket, then the TLS socket over it. */
  private socket: Socket;
  private readonly receive = (chunk: string): void => {
    this.buffer += chunk;
    this.parse();
  };
  private readonly stalled = (): void =>
    this.fail(new SessionFailure('the server stopped answering (timed out)', true));

  private constructor(
    private readonly tcp: Socket,
    private readonly budget: AbortSignal,
  ) {
    this.socket = tcp;
    this.listen(tcp);
    budget.addEventListener('abort', this.stalled, { once: true });
  }

  /**
   * Connects to `address:port` within `connectTimeoutMs` (and the budget); rejects with ConnectFailure
   * (refused, unreachable, timed out: the next host may do). The session then lives within `budget`.
   */
  static open(address: string, port: number, budget: AbortSignal, connectTimeoutMs: number): Promise<SmtpSession> {
    const connecting = AbortSignal.any([budget, AbortSignal.timeout(connectTimeoutMs)]);
    return new Promise((resolve, reject) => {
      const timedOut = (): ConnectFailure => new ConnectFailure('no answer to the connection (timed out)', true);
      if (connecting.aborted) return reject(timedOut());
      const socket = connect({ host: address, port });
      const onAbort = (): void => {
        socket.destroy();
        reject(timedOut());
      };
      const onError = (error: NodeJS.ErrnoException): void => {
        connecting.removeEventListener('abort', onAbort);
        socket.destroy();
        reject(
          new ConnectFailure(CONNECT_ERRORS[error.code ?? ''] ?? `cannot connect (${error.code ?? error.message})`),
        );
      };
      connecting.addEventListener('abort', onAbort, { once: true });
      socket.once('error', onError);
      socket.once('connect', () => {
        connecting.removeEventListener('abort', onAbort);
        socket.off('error', onError);
        resolve(new SmtpSession(socket, budget));
      });
    });
  }

  /**
   * Turns the connection to TLS, once the server has answered `STARTTLS` with 220 (RFC 3207): a TLS socket
   * over the TCP one takes over reading and writing; the budget, the errors and the close of either still
   * end the session. `host`, the mail host's name, is sent as SNI (not an address literal: RFC 6066).
   *
   * Opportunistic TLS, as MTAs speak it to each other (RFC 3207 §4.1, RFC 7435): the certificate is not
   * checked (`rejectUnauthorized: false`), and TLS 1.0 and 1.1 are accepted (`OPPORTUNISTIC_TLS`, ADR 0041).
   * A mail host's certificate often does not name it, and a probe reads no secret and sends none: TLS here is
   * what the server asks for before it will talk, not a trust decision.
   *
   * Anything the server sent after its 220, before the handshake, fails the session: read as replies over
   * TLS, it would answer commands not yet sent (the STARTTLS response injection of RFC 3207 §6). Rejects
   * with a SessionFailure when the handshake fails, the connection closes or the budget runs out.
   */
  startTls(host: string): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.buffer !== '' || this.lines.length > 0) {
      this.fail(new SessionFailure('the server sent more after its 220 to STARTTLS'));
      return Promise.reject(this.failure!);
    }
    return new Promise((resolve, reject) => {
      this.handshake = reject;
      this.tcp.off('data', this.receive);
      const sni = isIP(host) === 0 ? { servername: host } : {};
      const tls = connectTls({ socket: this.tcp, rejectUnauthorized: false, ...OPPORTUNISTIC_TLS, ...sni });
      this.socket = tls;
      this.listen(tls);
      tls.once('secureConnect', () => {
        this.handshake = null;
        resolve();
      });
    });
  }

  /** The next reply (the greeting, after connecting). */
  read(): Promise<SmtpReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.parse();
    });
  }

  /** Sends one command line and reads its reply. */
  command(line: string): Promise<SmtpReply> {
    if (this.failure) return Promise.reject(this.failure);
    this.socket.write(`${line}\r\n`);
    return this.read();
  }

  /** `QUIT`, without waiting for the 221, and the connection closed. Never fails. */
  close(): void {
    if (!this.failure && this.socket.writable) this.socket.end('QUIT\r\n');
    this.failure ??= new SessionFailure('closed');
    this.budget.removeEventListener('abort', this.stalled);
    this.socket.destroySoon();
  }

  /** Reads `socket`'s data; its errors and its close end the session (a TCP socket's, then a TLS socket's too). */
  private listen(socket: Socket): void {
    socket.setEncoding('utf8');
    socket.on('data', this.receive);
    socket.on('error', (error: NodeJS.ErrnoException) => this.fail(new SessionFailure(this.describe(error))));
    socket.on('close', () => this.fail(new SessionFailure(this.closed())));
  }

  private describe(error: NodeJS.ErrnoException): string {
    // Node reports a connection closed during the handshake, cleanly or not, as ECONNRESET.
    if (this.handshake && error.code === 'ECONNRESET') return this.closed();
    const known = CONNECT_ERRORS[error.code ?? ''];
    if (this.handshake) return `the TLS handshake failed (${known ?? error.code ?? error.message})`;
    return known ?? `socket error (${error.code ?? error.message})`;
  }

  private closed(): string {
    return `the server closed the connection${this.handshake ? ' during the TLS handshake' : ''}`;
  }

  /**
   * Moves complete lines out of the buffer and settles the pending read once a reply's last line came.
   * What is received and not yet read — the lines of a reply so far and a line not yet ended — is held to
   * MAX_REPLY_CHARS: a multi-line reply (`250-…`) that never ends is overlong too, not only a long line.
   */
  private parse(): void {
    let end: number;
    while ((end = this.buffer.indexOf('\n')) >= 0) {
      this.lines.push(this.buffer.slice(0, end).replace(/\r$/, ''));
      this.buffer = this.buffer.slice(end + 1);
    }
    if (this.buffer.length + this.lines.reduce((n, line) => n + line.length + 2, 0) > MAX_REPLY_CHARS) {
      this.fail(new SessionFailure('the server sent an overlong reply'));
      return;
    }
    if (!this.waiting) return;
    const last = this.lines.findIndex((line) => !/^\d{3}-/.test(line));
    if (last < 0) return;
    const lines = this.lines.splice(0, last + 1);
    const m = /^(\d{3})(?: (.*))?$/.exec(lines[last]!);
    const waiting = this.waiting;
    this.waiting = null;
    if (!m || !lines.every((l) => l.startsWith(m[1]!))) {
      this.fail(new SessionFailure('the server does not speak SMTP'));
      waiting.reject(this.failure!);
      return;
    }
    const texts = lines.map((l) => l.slice(4));
    const enhanced = /^([245]\.\d{1,3}\.\d{1,3})(?:\s|$)/.exec(texts[0] ?? '')?.[1] ?? null;
    waiting.resolve({ code: Number(m[1]), enhanced, lines: texts });
  }

  private fail(error: Error): void {
    if (!this.failure) this.failure = error;
    this.budget.removeEventListener('abort', this.stalled);
    this.socket.destroy();
    this.tcp.destroy();
    const waiting = this.waiting;
    const handshake = this.handshake;
    this.waiting = null;
    this.handshake = null;
    waiting?.reject(this.failure);
    handshake?.(this.failure);
  }
}

/** A reply as people read it: `550 5.1.1 no such user`, one line, printable, at most ~160 characters. */
export function describeReply(reply: SmtpReply): string {
  const text = reply.lines
    .join(' ')
    .replace(/[^\x20-\x7e]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const full = `${reply.code} ${text}`.trim();
  return full.length <= 160 ? full : `${full.slice(0, 159)}…`;
}
