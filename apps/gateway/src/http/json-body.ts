import type { FastifyInstance } from 'fastify';
import { DomainError } from '@dossier/domain';

export const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Only `application/json` bodies are accepted (any other type is 415, via Fastify). An empty body is
 * treated as no body; anything unparseable is `invalid_json`.
 */
export function installJsonBodyParser(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES },
    (_req, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') {
        done(null, undefined);
        return;
      }
      try {
        done(null, JSON.parse(text) as unknown);
      } catch {
        done(new DomainError('invalid_json', 'the body is not valid JSON'), undefined);
      }
    },
  );
}
