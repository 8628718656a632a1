import { connect, type Socket } from 'node:net';

/** One SMTP reply (RFC 5321 §4.2): its code, the enhanced status code when given (RFC 3463), every line's text. */
export interface SmtpReply {
  code: number;
  enhanced: string | null;
  lines: string[];
}

/** The connection could not be made: the next mail host may be tried. */
export class ConnectFailure extends Error {
  override readonly name = 'ConnectFailure';
}

/** The session broke after it was made (the server hung, closed or spoke something else than SMTP). */
export class SessionFailure extends Error {
  override readonly name = 'SessionFailure';
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
 * A client side of one SMTP session over `node:net`, one command at a time (no pipelining), no TLS: it
 * only ever speaks the envelope commands of a mailbox probe. The whole session shares one budget
 * (`budget`: the per-connection timeout and the lookup's deadline); when it runs out the socket is
 * destroyed and the pending read fails.
 */
export class SmtpSession {
  private buffer = '';
  private lines: string[] = [];
  private waiting: { resolve: (reply: SmtpReply) => void; reject: (error: Error) => void } | null = null;
  private failure: Error | null = null;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.receive(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      this.fail(
        new SessionFailure(CONNECT_ERRORS[error.code ?? ''] ?? `socket error (${error.code ?? error.message})`),
      ),
    );
    socket.on('close', () => this.fail(new SessionFailure('the server closed the connection')));
  }

  /**
   * Connects to `address:port` within `connectTimeoutMs` (and the budget); rejects with ConnectFailure
   * (refused, unreachable, timed out: the next host may do). The session then lives within `budget`.
   */
  static open(address: string, port: number, budget: AbortSignal, connectTimeoutMs: number): Promise<SmtpSession> {
    const connecting = AbortSignal.any([budget, AbortSignal.timeout(connectTimeoutMs)]);
    return new Promise((resolve, reject) => {
      const timedOut = (): ConnectFailure => new ConnectFailure('no answer to the connection (timed out)');
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
        const session = new SmtpSession(socket);
        const stalled = (): void => session.fail(new SessionFailure('the server stopped answering (timed out)'));
        budget.addEventListener('abort', stalled, { once: true });
        socket.once('close', () => budget.removeEventListener('abort', stalled));
        resolve(session);
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
    this.socket.destroySoon();
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    this.parse();
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
    this.socket.destroy();
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.reject(this.failure);
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
