import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PhoneInput } from '@dossier/contracts';
import { FOREIGN_404S, FakeUpstream, REPO_ROOT, type FakeAnswer } from '@dossier/testing';
import { libphonenumberProvider } from '../libphonenumber/libphonenumber.provider';
import { mergeItems } from '../merge';
import { unguardedContext } from '../provider';
import { twilioProvider } from './twilio.provider';

const FOUND = JSON.parse(
  readFileSync(join(REPO_ROOT, 'libs/providers/src/twilio/fixtures/ok/found.json'), 'utf8'),
) as FakeAnswer & { body: Record<string, unknown> & { line_type_intelligence: Record<string, unknown> } };

/** Twilio's documented answer for the fixture's number, with some fields changed. */
function answer(
  fields: Record<string, unknown>,
  line: Record<string, unknown> | null = FOUND.body.line_type_intelligence,
): FakeAnswer {
  return { ...FOUND, body: { ...FOUND.body, ...fields, line_type_intelligence: line } };
}

const SETTINGS = { TWILIO_ACCOUNT_SID: 'AC0123', TWILIO_AUTH_TOKEN: 'secret-token' };

describe('twilioProvider', () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await FakeUpstream.start();
  });
  afterAll(async () => {
    await fake.close();
  });

  function lookup(input: PhoneInput = { phone: '+14155552671' }) {
    return twilioProvider.lookup(
      'phone',
      input,
      unguardedContext(AbortSignal.timeout(5000), { ...SETTINGS, TWILIO_BASE_URL: fake.url }),
    );
  }

  it('is off until both the account SID and the auth token are set, and says which is missing', () => {
    expect(twilioProvider.isConfigured({})).toBe('not configured: set TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN');
    expect(twilioProvider.isConfigured({ TWILIO_ACCOUNT_SID: 'AC0123' })).toBe('not configured: set TWILIO_AUTH_TOKEN');
    expect(twilioProvider.isConfigured(SETTINGS)).toBe(true);
  });

  // Twilio bills each call; for a number no numbering plan allows it can only say `valid: false` too.
  it('is not called for a number libphonenumber finds impossible, and is for any possible one, valid or not', () => {
    const applies = (input: PhoneInput) => twilioProvider.appliesTo?.(input) ?? true;
    for (const impossible of ['+1 415 555', '+1 415 555 26710', '+44 20 7946', '+44 20 7946 00181', '020 794']) {
      expect([impossible, applies({ phone: impossible, country: 'GB' })]).toEqual([impossible, false]);
    }
    expect(applies({ phone: '+14155552671' })).toBe(true);
    // Possible but not valid here: Twilio's numbering data may be newer than ours and tell otherwise.
    expect(applies({ phone: '+1 555 555 0199' })).toBe(true);
    expect(applies({ phone: '020 7946 0018', country: 'GB' })).toBe(true);
  });

  it('ranks above libphonenumber in the merge, and declares a shared rate limit', () => {
    expect(twilioProvider.precedence).toBeGreaterThan(libphonenumberProvider.precedence ?? 0);
    expect(twilioProvider.rateLimit).toEqual({ max: 100, perMs: 1000 });
  });

  // Every value Twilio documents for line_type_intelligence.type, written out from its docs.
  it.each([
    ['landline', 'fixed_line'],
    ['mobile', 'mobile'],
    ['fixedVoip', 'voip'],
    ['nonFixedVoip', 'voip'],
    ['personal', 'personal_number'],
    ['tollFree', 'toll_free'],
    ['premium', 'premium_rate'],
    ['sharedCost', 'shared_cost'],
    ['uan', 'uan'],
    ['voicemail', 'voicemail'],
    ['pager', 'pager'],
    ['unknown', 'unknown'],
    ['satellite', 'unknown'],
    [null, 'unknown'],
  ])('maps the line type %p onto %p', async (type, lineType) => {
    fake.reply(answer({}, { ...FOUND.body.line_type_intelligence, type }));
    const { outcome, items } = await lookup();
    expect(outcome).toBe('found');
    expect(items).toEqual([expect.objectContaining({ line_type: lineType, carrier: 'T-Mobile USA, Inc.' })]);
  });

  it('answers a number Twilio finds not valid with its verdict, possible as its validation_errors say', async () => {
    fake.reply(
      answer(
        {
          phone_number: '+1415555',
          national_format: null,
          calling_country_code: null,
          country_code: null,
          valid: false,
          validation_errors: ['TOO_SHORT'],
        },
        null,
      ),
    );
    await expect(lookup({ phone: '+1 415 555' })).resolves.toEqual({
      outcome: 'found',
      items: [
        {
          input: '+1 415 555',
          e164: '+1415555',
          valid: false,
          validation_errors: ['TOO_SHORT'],
          possible: false,
          country_code: '',
          region: null,
          location: null,
          carrier: null,
          line_type: 'unknown',
          time_zones: [],
          national_format: '',
          international_format: '',
          sources: ['twilio'],
        },
      ],
    });

    fake.reply(answer({ valid: false, validation_errors: ['INVALID_BUT_POSSIBLE'] }, null));
    const possible = await lookup();
    expect(possible.items[0]).toMatchObject({ valid: false, possible: true, line_type: 'unknown', carrier: null });
  });

  // Twilio's docs: `validation_errors` gives a reason for a number that is not valid "in some cases"
  // (TOO_SHORT, TOO_LONG, INVALID_BUT_POSSIBLE, INVALID_COUNTRY_CODE, INVALID_LENGTH, NOT_A_NUMBER). Where it
  // gives none, or only one it has added since, it said nothing on possibility: the number's own parse does.
  it.each([
    [[], true],
    [null, true],
    [['SOME_NEW_REASON'], true],
    [['INVALID_BUT_POSSIBLE'], true],
    [['TOO_SHORT'], false],
    [['TOO_LONG'], false],
    [['INVALID_LENGTH'], false],
    [['INVALID_COUNTRY_CODE'], false],
    [['NOT_A_NUMBER'], false],
  ])('a number not valid with validation_errors %p is possible: %p', async (errors, possible) => {
    // Possible (and not valid) for libphonenumber: the numbers Twilio is asked about and may find not valid.
    fake.reply(answer({ phone_number: '+15555550199', valid: false, validation_errors: errors }, null));
    const { items } = await lookup({ phone: '+1 555 555 0199' });
    expect(items).toEqual([expect.objectContaining({ valid: false, possible })]);
  });

  it.each([
    [['TOO_LONG'], ['TOO_LONG']],
    [['INVALID_BUT_POSSIBLE', 'SOME_NEW_REASON'], ['INVALID_BUT_POSSIBLE']],
    // None given, or none known: the number's own parse says why (+1 555 555 0199 is in no US range).
    [[], ['INVALID_BUT_POSSIBLE']],
    [null, ['INVALID_BUT_POSSIBLE']],
    [['SOME_NEW_REASON'], ['INVALID_BUT_POSSIBLE']],
  ])("gives Twilio's validation_errors %p as %p", async (errors, reasons) => {
    fake.reply(answer({ phone_number: '+15555550199', valid: false, validation_errors: errors }, null));
    const { items } = await lookup({ phone: '+1 555 555 0199' });
    expect(items).toEqual([expect.objectContaining({ valid: false, validation_errors: reasons })]);
  });

  it('says possible for a valid number whatever its validation_errors', async () => {
    for (const errors of [[], null, ['TOO_SHORT']]) {
      fake.reply(answer({ valid: true, validation_errors: errors }));
      const { items } = await lookup();
      expect([errors, items[0]?.possible]).toEqual([errors, true]);
    }
  });

  it('reports a number without line data (error_code) as unknown with the code, keeping what Twilio knows', async () => {
    fake.reply(
      answer(
        {},
        { error_code: 60601, carrier_name: null, type: null, mobile_country_code: null, mobile_network_code: null },
      ),
    );
    const result = await lookup();
    expect(result).toMatchObject({
      outcome: 'unknown',
      detail: 'twilio: no line type data for this number (error 60601)',
    });
    expect(result.items).toEqual([expect.objectContaining({ valid: true, carrier: null, line_type: 'unknown' })]);
  });

  it("reads Twilio's own 404 as not found, and a 404 that is not Twilio's as an error, never as not found", async () => {
    fake.reply(
      JSON.parse(readFileSync(join(REPO_ROOT, 'libs/providers/src/twilio/fixtures/ok/not-found.json'), 'utf8')),
    );
    await expect(lookup()).resolves.toEqual({ outcome: 'not_found', items: [] });

    // What a proxy or a wrong TWILIO_BASE_URL answers: no Twilio error body, so nothing was looked up.
    for (const page of FOREIGN_404S) {
      fake.reply(page);
      await expect(lookup()).rejects.toMatchObject({
        name: 'ProviderError',
        code: 'malformed',
        message: "twilio: a 404 that is not the vendor's answer (is TWILIO_BASE_URL right?)",
      });
    }
  });

  it('asks for the E.164 form of national input, with the account as HTTP Basic credentials', async () => {
    fake.reply(FOUND);
    await lookup({ phone: '415 555 2671', country: 'us' });
    const seen = fake.requests.at(-1)!;
    expect(seen.url).toBe('/v2/PhoneNumbers/+14155552671?Fields=line_type_intelligence');
    expect(seen.headers['authorization']).toBe(`Basic ${Buffer.from('AC0123:secret-token').toString('base64')}`);
  });

  describe('merged with libphonenumber into the one phone item', () => {
    /** The merged item, and libphonenumber's own. */
    async function merged(input: PhoneInput, twilio: FakeAnswer) {
      fake.reply(twilio);
      const ctx = unguardedContext(AbortSignal.timeout(5000), { ...SETTINGS, TWILIO_BASE_URL: fake.url });
      const [offline, live] = await Promise.all([
        libphonenumberProvider.lookup('phone', input, ctx),
        twilioProvider.lookup('phone', input, ctx),
      ]);
      const items = mergeItems('phone', [
        { precedence: libphonenumberProvider.precedence ?? 0, items: offline.items },
        { precedence: twilioProvider.precedence ?? 0, items: live.items },
      ]);
      expect(items).toHaveLength(1);
      return { item: items[0]!, offline: offline.items[0]! };
    }

    it("is libphonenumber's item with Twilio's live carrier and line type, crediting both", async () => {
      const { item, offline } = await merged({ phone: '+14155552671' }, FOUND);
      expect(offline).toMatchObject({
        carrier: null,
        line_type: 'fixed_line_or_mobile',
        location: 'San Francisco, CA',
      });
      expect(item).toEqual({
        ...offline,
        carrier: 'T-Mobile USA, Inc.',
        line_type: 'mobile',
        sources: ['twilio', 'libphonenumber'],
      });
    });

    /** Twilio's answer for a UK mobile number, with its line data. */
    const uk = (line: Record<string, unknown>) =>
      answer(
        {
          calling_country_code: '44',
          country_code: 'GB',
          phone_number: '+447400123456',
          national_format: '07400 123456',
        },
        line,
      );

    it("prefers the carrier serving a ported number over the range's original holder", async () => {
      const ported = uk({
        error_code: null,
        mobile_country_code: '234',
        mobile_network_code: '15',
        carrier_name: 'Vodafone',
        type: 'mobile',
      });
      const { item, offline } = await merged({ phone: '+44 7400 123456' }, ported);
      expect(offline.carrier).toBe('Three');
      expect(item).toEqual({ ...offline, carrier: 'Vodafone', sources: ['twilio', 'libphonenumber'] });
    });

    it("takes Twilio's verdict where the two disagree, with none of a valid number's range data next to valid: false", async () => {
      // Twilio finds not valid what libphonenumber's (older or newer) metadata finds valid.
      const withdrawn = answer({ valid: false, validation_errors: ['INVALID_BUT_POSSIBLE'] }, null);
      const { item, offline } = await merged({ phone: '+14155552671' }, withdrawn);
      expect(offline).toMatchObject({ valid: true, location: 'San Francisco, CA', line_type: 'fixed_line_or_mobile' });
      expect(item).toEqual({
        ...offline,
        valid: false,
        // Of a possible length, and in a range libphonenumber knows: Twilio's verdict, the parse's reason.
        validation_errors: ['INVALID_BUT_POSSIBLE'],
        possible: true,
        location: null,
        carrier: null,
        line_type: 'unknown',
        time_zones: [],
        sources: ['twilio', 'libphonenumber'],
      });

      // The reverse: a range Twilio knows and libphonenumber does not yet: Twilio's line data, nothing invented.
      const opened = answer({
        phone_number: '+15555550199',
        national_format: '(555) 555-0199',
        valid: true,
        validation_errors: [],
      });
      const reverse = await merged({ phone: '+1 555 555 0199' }, opened);
      expect(reverse.offline).toMatchObject({ valid: false, possible: true, line_type: 'unknown', location: null });
      expect(reverse.item).toEqual({
        ...reverse.offline,
        valid: true,
        validation_errors: [],
        possible: true,
        region: 'US',
        carrier: 'T-Mobile USA, Inc.',
        line_type: 'mobile',
        sources: ['twilio', 'libphonenumber'],
      });
    });

    it('keeps a not-valid number possible where Twilio names no reason', async () => {
      // libphonenumber finds it possible and not valid; Twilio agrees on valid and says nothing on why.
      const silent = answer(
        { phone_number: '+15555550199', national_format: '(555) 555-0199', valid: false, validation_errors: [] },
        null,
      );
      const { item, offline } = await merged({ phone: '+1 555 555 0199' }, silent);
      expect(offline).toMatchObject({ valid: false, possible: true, region: null });
      expect(item).toEqual({ ...offline, region: 'US', sources: ['twilio', 'libphonenumber'] });
    });

    it("keeps libphonenumber's carrier and line type where Twilio has none", async () => {
      const none = uk({ error_code: 60600, carrier_name: null, type: null });
      const { item, offline } = await merged({ phone: '+44 7400 123456' }, none);
      expect(item).toEqual({ ...offline, sources: ['twilio', 'libphonenumber'] });
    });
  });
});
