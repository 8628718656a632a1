import type { Socket } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import getTLSOptions from 'smtp-server/lib/tls-options.js';

/** A reply the fake sends: `{ code: 550, message: '5.1.1 no such user' }`. */
export interface SmtpAnswer {
  code: number;
  message: string;
}

/** How `RCPT TO` answers: accept (250), a reply, or never (the server hangs). */
export type RcptScript = 'accept' | 'hang' | SmtpAnswer;

/** What the fake plays, from the greeting on. Anything not scripted is a well-behaved server. */
export interface SmtpScript {
  /**
   * `hang`: connections are accepted but never greeted; `drop`: they are closed before any greeting; a
   * reply: the session is refused with it.
   */
  greeting?: 'ok' | 'hang' | 'drop' | SmtpAnswer;
  /**
   * `false`: EHLO is not understood (500), as on a server that only speaks RFC 821's HELO; a reply: EHLO and
   * HELO are both answered with it (a server that greets, then will not hold the session: `421 4.7.0 try
   * again later`, `554 5.7.1 go away`).
   */
  ehlo?: boolean | SmtpAnswer;
  /**
   * STARTTLS (RFC 3207), with `smtp-server`'s own self-signed certificate: `offered` (the default), listed
   * in the EHLO reply and taken when asked for; `required`, offered, and `MAIL FROM` refused with `530 5.7.0
   * Must issue a STARTTLS command first` until it is taken; `none`, neither offered nor understood;
   * `broken`, required, but after its 220 to STARTTLS the server speaks no TLS: it answers the client's
   * TLS hello with a line of plain text; `refused`, required, but STARTTLS is answered `454 4.7.0 TLS not
   * available due to temporary reason` (RFC 3207).
   */
  starttls?: 'offered' | 'required' | 'none' | 'broken' | 'refused';
  /**
   * A reply to EHLO and HELO over TLS, after STARTTLS (in plain text they are answered as `ehlo` says): a
   * server that turns to TLS, then will not hold the session (`421 4.7.0 try again later`).
   */
  ehloOverTls?: SmtpAnswer;
  /** How `MAIL FROM` answers once STARTTLS is done or not required (a blocked sender: a 5xx). */
  mailFrom?: 'accept' | SmtpAnswer;
  /**
   * How `RCPT TO` answers: by the address (lower-cased), else by `@domain` (every address of the domain:
   * a catch-all when `accept`), else `550 5.1.1` (no such mailbox).
   */
  rcpt?: Record<string, RcptScript>;
}

/** How `smtp-server`'s connection answers one command (`handler_<COMMAND>`). */
type CommandHandler = (command: unknown, callback: () => void) => void;

/**
 * What the fake reaches into of `smtp-server`'s connection: its id, its socket, whether it is over TLS, its
 * own EHLO and HELO handlers, a raw reply, closing it.
 */
interface SmtpConnection {
  id: string;
  _socket: Socket;
  secure: boolean;
  handler_EHLO: CommandHandler;
  handler_HELO: CommandHandler;
  send(code: number, message: string): void;
  close(): void;
}

const NO_SUCH_USER: SmtpAnswer = { code: 550, message: '5.1.1 no such user here' };
const TLS_FIRST: SmtpAnswer = { code: 530, message: '5.7.0 Must issue a STARTTLS command first' };

/**
 * `smtp-server`'s built-in test certificate (self-signed, its key published), given as the fake's own: left
 * implicit, the server warns on every start that its key is public — which, on loopback, for a probe that
 * checks no certificate, is no concern.
 */
const { key, cert } = getTLSOptions();

/**
 * An SMTP server on 127.0.0.1 (`smtp-server`) that plays what the test scripts — an MX host for the probe —
 * and records the commands of every session, in order (those sent over TLS after STARTTLS too). No AUTH; a
 * message is never expected (a `DATA` is recorded like any command, and refused).
 */
export class FakeSmtp {
  /** The commands each session sent, one array per connection, in the order they came. */
  readonly sessions: string[][] = [];
  private readonly commandsById = new Map<string, string[]>();

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
    public script: SmtpScript,
  ) {}

  /**
   * Listens on `listen.host` (default 127.0.0.1) and `listen.port` (default: any free one): a second mail host
   * on another loopback address (127.0.0.10) needs the first one's port, the one `SMTP_PROBE_PORT` names.
   * `listen.tlsVersion`: after STARTTLS, that TLS version only, as an old mail host speaks (OpenSSL's security
   * level lowered to 0, without which OpenSSL 3 serves neither TLS 1.0 nor 1.1); by default, any from TLS 1.0.
   */
  static async start(
    script: SmtpScript = {},
    listen: { host?: string; port?: number; tlsVersion?: 'TLSv1' | 'TLSv1.1' } = {},
  ): Promise<FakeSmtp> {
    const ref: { fake?: FakeSmtp } = {};
    const record = (entry: { tnx?: string; cid?: string }, ...message: unknown[]): void => {
      if (entry.tnx === 'command' && entry.cid) ref.fake?.record(entry.cid, message.slice(1).join(' '));
    };
    const quiet = (): void => undefined;
    const server = new SMTPServer({
      name: 'mx.fake.test',
      key,
      cert,
      ...(listen.tlsVersion
        ? { minVersion: listen.tlsVersion, maxVersion: listen.tlsVersion, ciphers: 'DEFAULT:@SECLEVEL=0' }
        : {}),
      authOptional: true,
      disabledCommands: ['AUTH'],
      hideENHANCEDSTATUSCODES: true,
      disableReverseLookup: true,
      logger: { level: quiet, trace: quiet, debug: record, info: quiet, warn: quiet, error: quiet, fatal: quiet },
      onConnect: (session, callback) => ref.fake?.onConnect(session, callback),
      onMailFrom: (_address, session, callback) => {
        const starttls = ref.fake?.script.starttls ?? 'offered';
        if (['required', 'broken', 'refused'].includes(starttls) && !session.secure)
          return callback(refusal(TLS_FIRST));
        const answer = ref.fake?.script.mailFrom ?? 'accept';
        callback(answer === 'accept' ? null : refusal(answer));
      },
      onRcptTo: (address, _session, callback) => {
        const answer = ref.fake?.rcptAnswer(address.address) ?? NO_SUCH_USER;
        if (answer === 'hang') return;
        callback(answer === 'accept' ? null : refusal(answer));
      },
      onData: (stream, _session, callback) => {
        stream.resume();
        stream.on('end', () => callback(refusal({ code: 554, message: '5.7.0 a probe never sends a message' })));
      },
    });
    // A connection's error (a TLS hello the fake's version does not speak) is the test's to read from the
    // probe's answer; left unhandled, it would fail the test run.
    server.on('error', () => undefined);
    const listening = server.listen(listen.port ?? 0, listen.host ?? '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      listening.once('listening', resolve);
      listening.once('error', reject);
    });
    const address = listening.address();
    if (typeof address !== 'object' || address === null) throw new Error('fake SMTP server has no port');
    ref.fake = new FakeSmtp(server, address.port, script);
    return ref.fake;
  }

  async close(): Promise<void> {
    for (const connection of this.server.connections) connection.close();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onConnect(session: SMTPServerSession, callback: (err?: Error | null) => void): void {
    this.commandsById.set(session.id, []);
    this.sessions.push(this.commandsById.get(session.id)!);
    const starttls = this.script.starttls ?? 'offered';
    if (this.script.ehlo === false || starttls === 'none') {
      session.disabledCommands = [...(this.script.ehlo === false ? ['EHLO'] : []), 'AUTH', 'STARTTLS'];
    }
    const connection = this.connection(session.id);
    if (starttls === 'broken' && connection) {
      // The 220, then, to the client's TLS hello, plain text; the session is left there (the client gives up).
      const speakNoTls = (): void => {
        connection.send(220, 'Ready to start TLS');
        connection._socket.once('data', () => connection.send(421, '4.7.0 this is not TLS'));
      };
      Object.assign(connection, { handler_STARTTLS: speakNoTls });
    }
    if (starttls === 'refused' && connection) {
      const refuseTls = (_command: unknown, callback: () => void): void => {
        connection.send(454, '4.7.0 TLS not available due to temporary reason');
        callback();
      };
      Object.assign(connection, { handler_STARTTLS: refuseTls });
    }
    const hello = this.script.ehlo;
    const overTls = this.script.ehloOverTls;
    if ((typeof hello === 'object' || overTls) && connection) {
      const own = { EHLO: connection.handler_EHLO, HELO: connection.handler_HELO };
      const answer =
        (command: 'EHLO' | 'HELO'): CommandHandler =>
        (line, callback) => {
          const reply = connection.secure && overTls ? overTls : typeof hello === 'object' ? hello : null;
          if (!reply) return own[command].call(connection, line, callback);
          connection.send(reply.code, reply.message);
          callback();
        };
      Object.assign(connection, { handler_EHLO: answer('EHLO'), handler_HELO: answer('HELO') });
    }
    const greeting = this.script.greeting ?? 'ok';
    if (greeting === 'hang') return;
    if (greeting === 'drop') {
      this.connection(session.id)?.close();
      return;
    }
    callback(greeting === 'ok' ? null : refusal(greeting));
  }

  /** `smtp-server`'s connection of a session (it keeps them in `connections`, which its types do not describe). */
  private connection(sessionId: string): SmtpConnection | undefined {
    for (const connection of this.server.connections as Set<SmtpConnection>) {
      if (connection.id === sessionId) return connection;
    }
    return undefined;
  }

  private record(sessionId: string, line: string): void {
    this.commandsById.get(sessionId)?.push(line);
  }

  private rcptAnswer(address: string): RcptScript {
    const rcpt = this.script.rcpt ?? {};
    const lower = address.toLowerCase();
    return rcpt[lower] ?? rcpt[lower.slice(lower.lastIndexOf('@'))] ?? NO_SUCH_USER;
  }
}

function refusal(answer: SmtpAnswer): Error {
  return Object.assign(new Error(answer.message), { responseCode: answer.code });
}
