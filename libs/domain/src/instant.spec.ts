import { microsecondInstant } from './instant';

describe('microsecondInstant', () => {
  it.each([
    ['2026-03-01T10:00:00Z', '2026-03-01T10:00:00.000000Z'],
    ['2026-03-01T10:00:00.5Z', '2026-03-01T10:00:00.500000Z'],
    ['2026-03-01T10:00:00.000500Z', '2026-03-01T10:00:00.000500Z'],
    ['2026-03-01T10:00:00.123456Z', '2026-03-01T10:00:00.123456Z'],
    ['2026-03-01T12:00:00.123456+02:00', '2026-03-01T10:00:00.123456Z'],
    ['2026-03-01T10:00:00.123456000Z', '2026-03-01T10:00:00.123456Z'],
    // past the microsecond: up to the next one, carrying into the second, the day and the year
    ['2026-03-01T10:00:00.1234561Z', '2026-03-01T10:00:00.123457Z'],
    ['2026-03-01T10:00:00.000999999Z', '2026-03-01T10:00:00.001000Z'],
    ['2026-12-31T23:59:59.9999999Z', '2027-01-01T00:00:00.000000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000000Z'],
    ['9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59.999999Z'],
    ['0000-01-01T00:00:00Z', '-infinity'],
    ['0001-01-01T00:00:00+00:01', '-infinity'],
    ['9999-12-31T23:59:59.9999999Z', 'infinity'],
    ['9999-12-31T23:59:59-23:59', 'infinity'],
  ])('reads %s as %s', (text, exact) => {
    expect(microsecondInstant(text)).toBe(exact);
  });

  it('gives texts that order as their instants do', () => {
    const texts = [
      '0000-06-01T00:00:00Z',
      '0001-01-01T00:00:00Z',
      '2026-03-01T10:00:00.1234561Z',
      '9999-12-31T23:59:59-23:59',
    ];
    const exact = texts.map((t) => microsecondInstant(t)!);
    expect([...exact].sort()).toEqual(exact);
  });

  it.each(['yesterday', '2026-03-01', '2026-03-01T10:00Z', '2026-03-01T10:00:00', '2026-13-01T00:00:00Z'])(
    'refuses %s',
    (text) => {
      expect(microsecondInstant(text)).toBeNull();
    },
  );
});
