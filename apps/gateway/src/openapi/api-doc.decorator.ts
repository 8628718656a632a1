import { SetMetadata } from '@nestjs/common';
import type { z } from 'zod';
import type { ErrorCode } from '@dossier/domain';

export const API_DOC = 'dossier:api-doc';

/** What the OpenAPI document says about one route. The schemas are the ones the handler validates with. */
export interface ApiDocOptions {
  summary: string;
  tag: 'auth' | 'account' | 'lookups' | 'webhooks' | 'operations';
  description?: string;
  body?: z.ZodType;
  /**
   * Named request examples besides the body schema's own (listed as `examples`, the schema's as `default`),
   * each checked against the body schema: e.g. the test keys' synthetic inputs.
   */
  bodyExamples?: Record<string, { summary: string; value: unknown }>;
  /** The strict object schema the handler validates its query string with: one parameter per property. */
  query?: z.ZodObject;
  /** Success status and body schema. */
  status: number;
  response?: z.ZodType;
  /** Additional success answers (e.g. 202 pending for lookups). */
  alternatives?: { status: number; description: string; response: z.ZodType }[];
  errors: ErrorCode[];
  /** Bearer key required (default true). */
  auth?: boolean;
  /** Lookup endpoints take `Prefer` and `Idempotency-Key` (and carry the credit headers). */
  lookup?: boolean;
  /** Answers carry `X-Credits-Spent` / `X-Credits-Remaining` (default: same as `lookup`). */
  credits?: boolean;
  pathParams?: Record<string, string>;
  /** Media type of the success answer (default application/json). */
  contentType?: string;
}

/**
 * A `DELETE /v1/…/{id}`'s errors. A DELETE carries no body, but one sent goes through the body parser like
 * any other route's (`invalid_json`, `validation_error` for two Content-Types, `unsupported_media_type`,
 * `payload_too_large`).
 */
export const DELETE_BY_ID_ERRORS: ErrorCode[] = [
  'unauthorized',
  'not_found',
  'invalid_json',
  'validation_error',
  'unsupported_media_type',
  'payload_too_large',
  'rate_limited',
  'unavailable',
];

export const ApiDoc = (options: ApiDocOptions): MethodDecorator => SetMetadata(API_DOC, options);
