import { z } from 'zod';
import { DomainError } from '@dossier/domain';
import { parsePrefer } from './prefer';
import { RouteTable } from './route-table';
import { issuesToDetails, parseBody } from './validation';
import { toDomainError } from './error-envelope';
import { requestIdFor } from './request-id';
import type { IncomingMessage } from 'node:http';

describe('parsePrefer', () => {
  it.each([
    [undefined, { respondAsync: false, waitS: null }],
    ['respond-async', { respondAsync: true, waitS: null }],
    ['wait=5', { respondAsync: false, waitS: 5 }],
    ['respond-async, wait=10', { respondAsync: true, waitS: 10 }],
    ['Wait = 3', { respondAsync: false, waitS: 3 }],
    ['wait=-1', { respondAsync: false, waitS: null }],
    ['wait=abc', { respondAsync: false, waitS: null }],
    ['handling=lenient', { respondAsync: false, waitS: null }],
  ])('%j → %j', (header, expected) => {
    expect(parsePrefer(header)).toEqual(expected);
  });
});

describe('RouteTable', () => {
  const table = new RouteTable();
  table.add('POST', '/v1/verify/phone');
  table.add(['GET', 'HEAD'], '/v1/auth/keys');
  table.add('POST', '/v1/auth/keys');
  table.add('DELETE', '/v1/auth/keys/:id');

  it('lists the methods of a known path, with parameters and query strings', () => {
    expect(table.allowedMethods('/v1/verify/phone')).toEqual(['POST']);
    expect(table.allowedMethods('/v1/auth/keys?x=1')).toEqual(['GET', 'HEAD', 'POST']);
    expect(table.allowedMethods('/v1/auth/keys/key_123')).toEqual(['DELETE']);
  });

  it('knows nothing of unknown paths', () => {
    expect(table.allowedMethods('/v1/verify')).toEqual([]);
    expect(table.allowedMethods('/v1/auth/keys/a/b')).toEqual([]);
  });
});

describe('validation details', () => {
  const schema = z.object({ name: z.string({ error: 'must be a string' }), age: z.number().optional() }).strict();

  it('names every field: missing, wrong type, unknown', () => {
    const parsed = schema.safeParse({ age: 'x', extra: 1, other: 2 });
    expect(parsed.success).toBe(false);
    const details = issuesToDetails(parsed.error!.issues);
    expect(details).toEqual(
      expect.arrayContaining([
        { field: 'name', issue: 'is required' },
        { field: 'extra', issue: 'is not a known field' },
        { field: 'other', issue: 'is not a known field' },
        { field: 'age', issue: expect.any(String) },
      ]),
    );
  });

  it('parseBody throws a validation DomainError and treats no body as an empty object', () => {
    expect(() => parseBody(schema, undefined)).toThrow(DomainError);
    try {
      parseBody(schema, [1]);
    } catch (err) {
      expect((err as DomainError).details).toEqual([{ field: 'body', issue: 'must be a JSON object' }]);
    }
    expect(parseBody(schema, { name: 'x' })).toEqual({ name: 'x' });
  });
});

describe('toDomainError', () => {
  it('maps Fastify parser errors, infrastructure errors and unknown errors', () => {
    expect(toDomainError(Object.assign(new Error('x'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' })).code).toBe(
      'unsupported_media_type',
    );
    expect(toDomainError(Object.assign(new Error('x'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE' })).code).toBe(
      'payload_too_large',
    );
    expect(
      toDomainError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })).code,
    ).toBe('unavailable');
    expect(toDomainError(new Error("Stream isn't writeable and enableOfflineQueue options is false")).code).toBe(
      'unavailable',
    );
    const internal = toDomainError(new Error('SELECT secret FROM table'));
    expect(internal.code).toBe('internal_error');
    expect(internal.message).not.toContain('SELECT');
  });
});

describe('requestIdFor', () => {
  const req = (id?: string) =>
    ({ headers: id === undefined ? {} : { 'x-request-id': id } }) as unknown as IncomingMessage;
  it('echoes safe ids and mints new ones otherwise', () => {
    expect(requestIdFor(req('abc-123'))).toBe('abc-123');
    expect(requestIdFor(req('has space'))).toMatch(/^req_[0-9A-Za-z]{20}$/);
    expect(requestIdFor(req('x'.repeat(129)))).toMatch(/^req_/);
    expect(requestIdFor(req())).toMatch(/^req_/);
  });
});
