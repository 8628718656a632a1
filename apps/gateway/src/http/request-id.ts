import type { IncomingMessage } from 'node:http';
import { newId } from '@dossier/domain';

/** The header every answer carries its request id in (API.md). */
export const REQUEST_ID_HEADER = 'X-Request-Id';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._~:@+=\/-]{1,128}$/;

/** Fastify `genReqId`: echo the client's X-Request-Id when it is short and safe, else mint one. */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  const value = Array.isArray(given) ? given[0] : given;
  return value !== undefined && SAFE_REQUEST_ID.test(value) ? value : newId.request();
}
