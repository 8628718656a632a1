import { STATUS_CODES, maxHeaderSize, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { DomainError, newId } from '@dossier/domain';
import { HTTP_STATUS, envelopeOf } from './error-envelope';
import { REQUEST_ID_HEADER } from './request-id';

/**
 * What Node's HTTP server could not take as a request (its `clientError`: the parser's `HPE_*` codes, or a
 * client that did not send in time), as a contract error with a status of API.md's table where one fits:
 * a request that is not HTTP, or whose headers are over Node's limit (Node's own answer is `431`), is
 * `400 validation_error` like any other bad value (nginx answers both `400`). For a request cut by the
 * receive timeouts none fits: it keeps `408`, as `request_timeout`, which tells a client it may send again.
 */
export function clientErrorOf(code: string): DomainError {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new DomainError('request_timeout', 'the request did not arrive in time; the connection is closed');
    case 'HPE_HEADER_OVERFLOW':
      return new DomainError(
        'validation_error',
        `the request's headers are larger than ${Math.floor(maxHeaderSize / 1024)} KiB in all`,
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new DomainError('payload_too_large', 'the chunk extensions of the body are too large');
    default:
      return new DomainError('validation_error', 'the request is not valid HTTP/1.1');
  }
}

/** A whole HTTP/1.1 answer carrying the error envelope, for a socket no request or reply exists on. */
export function rawErrorAnswer(error: DomainError, requestId: string): string {
  const status = HTTP_STATUS[error.code];
  const body = JSON.stringify(envelopeOf(error, requestId));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    `${REQUEST_ID_HEADER}: ${requestId}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n' +
    `\r\n${body}`
  );
}

/** Node's own fields on a server socket: the answer being written on it, and the request its parser reads. */
interface ServerSocket extends Socket {
  _httpMessage?: ServerResponse | null;
  parser?: { incoming?: IncomingMessage | null } | null;
}

/** Connections whose error answer is decided: a second error on one (more bytes after the first) changes nothing. */
const closing = new WeakSet<Socket>();

/**
 * Fastify's `clientErrorHandler`, in place of its default (which answers in a JSON shape of its own and
 * without a request id): the envelope with a fresh request id, then the connection is closed.
 *
 * Requests read whole before the error (pipelined on a kept-alive connection: a lookup, then bytes that are
 * not HTTP) are answered first, in order, as they finish — the lookup's answer, then the error's — and only
 * then is the connection closed. Closing it at once (as Node's default does when no answer has begun) would
 * lose the answer of a lookup already accepted and charged, and put the error's answer in its place. A
 * request cut off mid-body by the error is answered by the error itself: its handler waits for a body that
 * will not come. Bytes that arrive meanwhile are read and dropped (the parser reports each as this error
 * again).
 */
export function clientErrorHandler(log: FastifyBaseLogger): (err: Error & { code?: string }, socket: Socket) => void {
  return (err, raw) => {
    const socket = raw as ServerSocket;
    // A reset connection, or one already gone: there is nobody to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed || closing.has(socket)) return;
    closing.add(socket);
    const requestId = newId.request();
    log.debug({ request_id: requestId, code: err.code }, 'client error');
    const incoming = socket.parser?.incoming;
    const cutOff = incoming && !incoming.complete ? incoming : null;
    afterOwedAnswers(socket, cutOff, () => {
      if (socket.writable) socket.end(rawErrorAnswer(clientErrorOf(err.code ?? ''), requestId));
      // Closed once the answer is flushed (at once when nothing is left to write).
      socket.destroySoon();
    });
  };
}

/**
 * Calls `then` once every answer owed on `socket` before the error is written: each answer in turn (Node
 * puts the next on the socket as one finishes), up to that of `cutOff` unless it has begun (bytes appended to
 * an answer under way would corrupt it).
 */
function afterOwedAnswers(socket: ServerSocket, cutOff: IncomingMessage | null, then: () => void): void {
  const answer = socket._httpMessage;
  if (!answer || (answer.req === cutOff && !answer.headersSent)) return then();
  // Node's own 'finish' listener, added first, has put the next answer on the socket by the time this runs.
  answer.once('finish', () => afterOwedAnswers(socket, cutOff, then));
}
