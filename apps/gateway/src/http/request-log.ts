import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The search this request made or read, for its log line (set where the answer names one). */
    searchId?: string;
  }
}

/** The route label of requests no route matched: never the raw URL (it may hold anything a client typed). */
const UNMATCHED = 'unmatched';

/**
 * Fastify's request logging, reduced to exactly one line per answered request: method, route pattern,
 * status, duration, and the account and search it concerned. The request id is bound to the request's
 * logger (`request_id`), so every other line logged while handling it carries it too.
 * A 5xx answer's line is at `error`, the others at `info`. Nothing from the URL's query, the headers or
 * the body is logged.
 */
export class RequestLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      route: request.routeOptions.url ?? UNMATCHED,
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 100) / 100,
      ...(request.auth ? { account_id: request.auth.accountId } : {}),
      ...(request.searchId ? { search_id: request.searchId } : {}),
    };
    if (error) request.log.error({ ...line, err: error }, 'request');
    else if (reply.statusCode >= 500) request.log.error(line, 'request');
    else request.log.info(line, 'request');
  }
}
