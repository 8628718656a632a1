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
