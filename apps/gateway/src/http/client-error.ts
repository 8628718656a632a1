import { STATUS_CODES, maxHeaderSize } from 'node:http';
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

/**
 * Fastify's `clientErrorHandler`, in place of its default (which answers in a JSON shape of its own and
 * without a request id): the envelope with a fresh request id, then the connection is closed. Nothing is
 * written once an answer to an earlier request on the connection has begun (Node's own rule), as bytes
 * appended to it would corrupt that answer.
 */
export function clientErrorHandler(log: FastifyBaseLogger): (err: Error & { code?: string }, socket: Socket) => void {
  return (err, socket) => {
    // A reset connection, or one already gone: there is nobody to answer.
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const requestId = newId.request();
    log.debug({ request_id: requestId, code: err.code }, 'client error');
    // Node's own field for the answer being written on this socket (the one its default handler checks).
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (socket.writable && !inFlight?.headersSent)
      socket.write(rawErrorAnswer(clientErrorOf(err.code ?? ''), requestId));
    socket.destroy(err);
  };
}
