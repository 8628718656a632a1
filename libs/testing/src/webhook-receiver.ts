import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from './wait-for';

export interface Received {
  raw: string;
  signature: string;
}

/** A receiver on loopback that answers each request as its script says: a status, or `hang` (never answers). */
export async function receiver(script: (number | 'hang')[]) {
  const received: Received[] = [];
  const hung: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        raw: Buffer.concat(chunks).toString('utf8'),
        signature: String(req.headers['dossier-signature']),
      });
      const step = script[received.length - 1] ?? 200;
      if (step === 'hang') hung.push(res);
      else res.writeHead(step).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return {
    url,
    received,
    /** Waits until at least `count` requests came in (`what` names them on a timeout); the events, parsed. */
    events: async <T = unknown>(count: number, what: string) => {
      await waitFor(
        () => Promise.resolve(received.length),
        (n) => n >= count,
        { timeoutMs: 30_000, what },
      );
      return received.map((r) => JSON.parse(r.raw) as { id: string; type: string; data: T });
    },
    /** Answers every request left hanging so far with `status`. */
    answerHung: (status: number) => {
      for (const res of hung.splice(0)) res.writeHead(status).end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hung) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
