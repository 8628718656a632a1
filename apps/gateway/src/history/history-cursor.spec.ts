import { decodeCursor, encodeCursor } from './history-cursor';

const json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('the history cursor', () => {
  it('carries a position to the microsecond and back, as opaque base64url text', () => {
    const position = { at: '2026-11-22T09:30:40.007212Z', id: 'srch_Vb2n8QkL0xR5tW1mZ7pC4yHd' };
    const cursor = encodeCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual(position);
    const first = { at: '0001-01-01T00:00:00.000000Z', id: 'srch_x' };
    expect(decodeCursor(encodeCursor(first))).toEqual(first);
  });

  it.each([
    ['empty', ''],
    ['not base64url', 'abc$%^'],
    ['not JSON', Buffer.from('hello').toString('base64url')],
    ['another version', json({ v: 2, at: '2026-11-22T09:30:40.007212Z', id: 'srch_a' })],
    ['milliseconds only', json({ v: 1, at: '2026-11-22T09:30:40.007Z', id: 'srch_a' })],
    ['an impossible day', json({ v: 1, at: '2026-02-30T00:00:00.000000Z', id: 'srch_a' })],
    ['the year 0000 (Postgres has none)', json({ v: 1, at: '0000-01-01T00:00:00.000000Z', id: 'srch_x' })],
    ['an hour past 23', json({ v: 1, at: '2026-02-01T24:00:00.000000Z', id: 'srch_a' })],
    ['not a search id', json({ v: 1, at: '2026-11-22T09:30:40.007212Z', id: "x' OR 1=1" })],
    ['an extra field', json({ v: 1, at: '2026-11-22T09:30:40.007212Z', id: 'srch_a', account: 'acct_x' })],
    ['too long', 'A'.repeat(401)],
  ])('refuses %s', (_label, cursor) => {
    expect(decodeCursor(cursor)).toBeNull();
  });
});
