import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api, FakeUpstream, REPO_ROOT, Stack, ledgerState, type FakeAnswer } from '@dossier/testing';

interface Source {
  provider: string;
  outcome: string;
  took_ms: number;
  detail?: string;
}
interface Envelope {
  status: string;
  results: Record<string, unknown>[];
  credits_remaining: number;
  sources: Source[];
}

const fixture = (path: string) =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'libs/providers/src', path), 'utf8')) as FakeAnswer & {
    body: { data: Record<string, unknown> };
  };
/** Twilio's documented answer for +1 415 555 2671: a T-Mobile mobile. */
const TWILIO_FOUND = fixture('twilio/fixtures/ok/found.json');
/** Hunter's documented answer, turned into an `invalid` verdict. */
const HUNTER_FOUND = fixture('hunter/fixtures/ok/found.json');
const HUNTER_INVALID: FakeAnswer = {
  ...HUNTER_FOUND,
  body: {
    ...HUNTER_FOUND.body,
    data: { ...HUNTER_FOUND.body.data, status: 'invalid', result: 'undeliverable', score: 12, smtp_check: false },
  },
};

const SID = 'AC0000000000000000000000000000e2e0';
const TOKEN = 'e2e-twilio-token';
const HUNTER_KEY = 'e2e-hunter-key-4f9c1d';
const PHONE = { phone: '+1 415 555 2671' };
const EMAIL = { email: 'patrick@stripe.com' };
const FIRST_HAND = ['email', 'smtp'];

const sourceOf = (body: Envelope, provider: string) => body.sources.find((s) => s.provider === provider);

describe('licensed providers: Twilio and Hunter against fakes of their vendors (gateway + worker processes)', () => {
  let twilio: FakeUpstream;
  let hunter: FakeUpstream;
  let stack: Stack;
  let api: Api;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    [twilio, hunter] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
    stack = await Stack.start({
      label: 'licensed',
      env: {
        TWILIO_ACCOUNT_SID: SID,
        TWILIO_AUTH_TOKEN: TOKEN,
        TWILIO_BASE_URL: twilio.url,
        HUNTER_API_KEY: HUNTER_KEY,
        HUNTER_BASE_URL: hunter.url,
        SMTP_PROBE: 'false',
      },
    });
    api = new Api(stack.baseUrl);
    ({ key, accountId } = await api.register());
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([twilio?.close(), hunter?.close()]);
  });

  /** A lookup, with what it did to the account's ledger. */
  async function charged(path: string, body: unknown) {
    const before = await ledgerState(accountId);
    const res = await api.post<Envelope>(path, body, { key });
    expect(res.status).toBe(200);
    const after = await ledgerState(accountId);
    expect(after.ledger_sum).toBe(after.balance);
    expect(res.body.credits_remaining).toBe(after.balance);
    expect(res.headers.get('x-credits-remaining')).toBe(String(after.balance));
    return { res, spent: before.balance - after.balance, captures: after.captures - before.captures };
  }

  describe('a phone lookup', () => {
    it("answers ONE item: Twilio's live carrier and line type, libphonenumber's location, time zones and formats", async () => {
      twilio.reply(TWILIO_FOUND);
      const { res, spent, captures } = await charged('/v1/verify/phone', PHONE);
      expect(res.body.results).toEqual([
        {
          input: '+1 415 555 2671',
          e164: '+14155552671',
          valid: true,
          validation_errors: [],
          possible: true,
          country_code: '1',
          region: 'US',
          location: 'San Francisco, CA',
          carrier: 'T-Mobile USA, Inc.',
          line_type: 'mobile',
          time_zones: ['America/Los_Angeles'],
          national_format: '(415) 555-2671',
          international_format: '+1 415 555 2671',
          sources: ['twilio', 'libphonenumber'],
        },
      ]);
      expect(res.body.sources).toEqual([
        { provider: 'libphonenumber', outcome: 'found', took_ms: expect.any(Number) },
        { provider: 'twilio', outcome: 'found', took_ms: expect.any(Number) },
      ]);
      expect(res.headers.get('x-credits-spent')).toBe('1');
      expect({ spent, captures }).toEqual({ spent: 1, captures: 1 });

      const seen = twilio.requests.at(-1)!;
      expect(seen.url).toBe('/v2/PhoneNumbers/+14155552671?Fields=line_type_intelligence');
      expect(seen.headers['authorization']).toBe(`Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`);
    });

    it.each([
      ['answers 503', { status: 503, body: { code: 20503, message: 'Service Unavailable', status: 503 } }, 'error'],
      ['hangs', { hang: true }, 'timeout'],
    ] as [string, FakeAnswer, string][])(
      "still answers libphonenumber's item, charged, when Twilio %s",
      async (_what, answer, outcome) => {
        twilio.reply(answer);
        const { res, spent, captures } = await charged('/v1/verify/phone', PHONE);
        expect(res.body.results).toEqual([
          expect.objectContaining({
            e164: '+14155552671',
            location: 'San Francisco, CA',
            carrier: null,
            line_type: 'fixed_line_or_mobile',
            sources: ['libphonenumber'],
          }),
        ]);
        expect(sourceOf(res.body, 'libphonenumber')).toMatchObject({ outcome: 'found' });
        expect(sourceOf(res.body, 'twilio')).toMatchObject({ outcome, detail: expect.stringMatching(/^twilio: /) });
        expect(res.headers.get('x-credits-spent')).toBe('1');
        expect({ spent, captures }).toEqual({ spent: 1, captures: 1 });
      },
    );

    it('never calls Twilio (billed per call) for a number that cannot be one: libphonenumber answers it alone', async () => {
      twilio.reply(TWILIO_FOUND);
      const asked = twilio.requests.length;
      const { res } = await charged('/v1/verify/phone', { phone: '+1 415 555' });
      expect(res.body.results).toEqual([
        expect.objectContaining({ e164: '+1415555', valid: false, possible: false, sources: ['libphonenumber'] }),
      ]);
      expect(res.body.sources).toEqual([{ provider: 'libphonenumber', outcome: 'found', took_ms: expect.any(Number) }]);
      expect(twilio.requests.length).toBe(asked);
    });

    it('answers within a wait shorter than Twilio may take, with twilio timeout, rather than 202 just after it', async () => {
      twilio.reply({ hang: true });
      const res = await api.post<Envelope>('/v1/verify/phone', PHONE, { key, headers: { prefer: 'wait=3' } });
      expect(res.status).toBe(200);
      expect(sourceOf(res.body, 'twilio')).toMatchObject({ outcome: 'timeout' });
      expect(sourceOf(res.body, 'libphonenumber')).toMatchObject({ outcome: 'found' });
    });
  });

  describe('an e-mail lookup', () => {
    it("takes Hunter's verdict where the first-hand checks could not tell, its score in the reason", async () => {
      hunter.reply(HUNTER_INVALID);
      const { res, spent } = await charged('/v1/verify/email', EMAIL);
      expect(res.body.results).toEqual([
        expect.objectContaining({
          email: 'patrick@stripe.com',
          deliverability: 'undeliverable',
          reason: 'Hunter: invalid (score 12)',
          sources: expect.arrayContaining(['hunter']),
        }),
      ]);
      expect(sourceOf(res.body, 'hunter')).toMatchObject({ outcome: 'found' });
      // In this stack DNS points at a dead loopback port and the probe is off: no first-hand verdict.
      for (const source of res.body.sources.filter((s) => FIRST_HAND.includes(s.provider))) {
        expect(['unknown', 'skipped']).toContain(source.outcome);
      }
      expect(res.headers.get('x-credits-spent')).toBe('1');
      expect(spent).toBe(1);
      expect(hunter.requests.at(-1)!.url).toBe(`/v2/email-verifier?email=patrick%40stripe.com&api_key=${HUNTER_KEY}`);
    });

    it('reports a verification Hunter is still running (202) as unknown with a detail, and charges nothing for it', async () => {
      hunter.reply({ status: 202, body: { data: { email: 'patrick@stripe.com' } } });
      const { res, spent } = await charged('/v1/verify/email', EMAIL);
      expect(sourceOf(res.body, 'hunter')).toEqual({
        provider: 'hunter',
        outcome: 'unknown',
        took_ms: expect.any(Number),
        detail: 'hunter: the verification is still running (202); ask again later',
      });
      expect(res.headers.get('x-credits-spent')).toBe('0');
      expect(spent).toBe(0);
    });

    it("never shows Hunter's key: not in answers, not in the processes' output", async () => {
      hunter.reply({ status: 500, body: { errors: [{ id: 'internal_server_error', code: 500 }] } });
      const { res } = await charged('/v1/verify/email', EMAIL);
      expect(sourceOf(res.body, 'hunter')).toMatchObject({ outcome: 'error', detail: 'hunter: upstream error (500)' });
      expect(res.text).not.toContain(HUNTER_KEY);
      expect(stack.logs).not.toContain(HUNTER_KEY);
      expect(stack.logs).not.toContain(TOKEN);
    });
  });
});
