import { createServer, type Server, type Socket } from 'node:net';
import { SessionFailure, SmtpSession } from './smtp-session';

/**
 * The session against a raw TCP server on loopback that writes exactly what a test gives, piece by piece
 * (what `smtp-server` never does: a reply that never ends, a reply cut anywhere).
 */
describe('SmtpSession against a raw server on loopback', () => {
  let server: Server;
  let port: number;
  let play: (socket: Socket) => void;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
      play(socket);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Writes `pieces` one at a time, each once the one before has left (then `after`, if any, forever). */
  const writeInPieces = (socket: Socket, pieces: string[], after?: string): void => {
    const next = (): void => {
      if (socket.destroyed) return;
      const piece = pieces.shift() ?? after;
      if (piece === undefined) return;
      socket.write(piece, () => setTimeout(next, 2));
    };
    next();
  };

  const open = (budget = AbortSignal.timeout(10_000)) => SmtpSession.open('127.0.0.1', port, budget, 3000);

  it('reads a multi-line reply that arrives in pieces cut anywhere, every line of it', async () => {
    const reply = '250-mx.example\r\n250-PIPELINING\r\n250-SIZE 35882577\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n';
    play = (socket) => writeInPieces(socket, reply.match(/.{1,7}/gs)!);
    const session = await open();
    try {
      await expect(session.read()).resolves.toEqual({
        code: 250,
        enhanced: null,
        lines: ['mx.example', 'PIPELINING', 'SIZE 35882577', '8BITMIME', 'SMTPUTF8'],
      });
    } finally {
      session.close();
    }
  });

  /** A server that greets, answers `STARTTLS` with `reply`, then does what `then` does with the socket. */
  const startTlsServer = (reply: string, then: (socket: Socket) => void) => (socket: Socket) => {
    socket.write('220 mx.example ESMTP\r\n');
    socket.once('data', () => {
      socket.write(reply);
      then(socket);
    });
  };

  /** Greeted, `STARTTLS` said and answered 220: the session turning to TLS with `budget`. */
  const turnToTls = async (budget: AbortSignal): Promise<{ session: SmtpSession; upgrade: Promise<void> }> => {
    const session = await open(budget);
    await session.read();
    await expect(session.command('STARTTLS')).resolves.toMatchObject({ code: 220 });
    return { session, upgrade: session.startTls('mx.example') };
  };

  it.each<[string, string, (socket: Socket) => void, string]>([
    [
      'the server closes the connection',
      '220 go ahead\r\n',
      (socket) => socket.once('data', () => socket.end()),
      'the server closed the connection during the TLS handshake',
    ],
    [
      'the server answers the TLS hello with plain text',
      '220 go ahead\r\n',
      (socket) => socket.once('data', () => socket.write('500 what is this\r\n')),
      'the TLS handshake failed (',
    ],
    [
      // What came after the 220, in plain text, could be taken for replies over TLS (RFC 3207 §6): not read.
      'the server sends more after its 220',
      '220 go ahead\r\n250 injected\r\n',
      () => undefined,
      'the server sent more after its 220 to STARTTLS',
    ],
  ])('fails the TLS handshake, saying why, when %s', async (_name, reply, then, message) => {
    play = startTlsServer(reply, then);
    const { session, upgrade } = await turnToTls(AbortSignal.timeout(10_000));
    try {
      await expect(upgrade).rejects.toThrow(SessionFailure);
      await expect(upgrade).rejects.toThrow(message);
      await expect(session.command('EHLO probe.example')).rejects.toThrow(message);
    } finally {
      session.close();
    }
  });

  it('gives up the TLS handshake when the budget runs out, as it gives up a reply', async () => {
    play = startTlsServer('220 go ahead\r\n', () => undefined);
    const budget = new AbortController();
    const { session, upgrade } = await turnToTls(budget.signal);
    try {
      budget.abort();
      await expect(upgrade).rejects.toThrow('the server stopped answering (timed out)');
    } finally {
      session.close();
    }
  });

  it('gives up on a multi-line reply that never ends, as overlong, instead of holding it until the budget runs out', async () => {
    // 1 KiB continuation lines, one write each: no piece is long, but the reply never gets its last line.
    play = (socket) => writeInPieces(socket, [], `220-${'x'.repeat(1018)}\r\n`);
    const session = await open(AbortSignal.timeout(15_000));
    try {
      const read = session.read();
      await expect(read).rejects.toThrow(SessionFailure);
      await expect(read).rejects.toThrow('the server sent an overlong reply');
    } finally {
      session.close();
    }
  });
});
