import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EmailResultItem } from '@dossier/contracts';
import { FakeUpstream, REPO_ROOT, type FakeAnswer } from '@dossier/testing';
import { emailItem } from '../email-item';
import { mergeItems } from '../merge';
import { ProviderError, unguardedContext } from '../provider';
import { hunterProvider } from './hunter.provider';

const KEY = 'hk_0123456789abcdef';
const FOUND = JSON.parse(
  readFileSync(join(REPO_ROOT, 'libs/providers/src/hunter/fixtures/ok/found.json'), 'utf8'),
) as FakeAnswer & { body: { data: Record<string, unknown>; meta: unknown } };

/** Hunter's documented answer with some `data` fields changed (or left out, with `undefined`). */
function verified(data: Record<string, unknown>): FakeAnswer {
  return { ...FOUND, body: { ...FOUND.body, data: { ...FOUND.body.data, ...data } } };
}

describe('hunterProvider', () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await FakeUpstream.start();
  });
  afterAll(async () => {
    await fake.close();
  });

  function lookup(email = 'patrick@stripe.com') {
    return hunterProvider.lookup(
      'email',
      { email },
      unguardedContext(AbortSignal.timeout(5000), { HUNTER_API_KEY: KEY, HUNTER_BASE_URL: fake.url }),
    );
  }

  /** What a lookup reported: its answer, or the ProviderError it threw. */
  async function outcomeOf(answer: FakeAnswer) {
    fake.reply(answer);
    try {
      return await lookup();
    } catch (error) {
      expect(error).toBeInstanceOf(ProviderError);
      return error as ProviderError;
    }
  }

  it('is off until HUNTER_API_KEY is set, and is not called for an address whose syntax is invalid', () => {
    expect(hunterProvider.isConfigured({})).toBe('not configured: set HUNTER_API_KEY');
    expect(hunterProvider.isConfigured({ HUNTER_API_KEY: KEY })).toBe(true);
    expect(hunterProvider.appliesTo!({ email: 'not an address' })).toBe(false);
    expect(hunterProvider.appliesTo!({ email: 'patrick@stripe.com' })).toBe(true);
  });

  it("ranks below the first-hand checks (precedence 0) and holds Hunter's 10/s and 300/min", () => {
    expect(hunterProvider.precedence).toBeLessThan(0);
    const { max, perMs } = hunterProvider.rateLimit!;
    // A token bucket lets a full bucket through at once, then refills: the worst second and minute.
    expect(max + (max * 1000) / perMs).toBeLessThanOrEqual(10);
    expect((max * 60_000) / perMs).toBeLessThanOrEqual(300);
  });

  // Every status Hunter documents, and the deprecated `result` of older answers.
  it.each([
    [{ status: 'valid', score: 100 }, 'found', 'deliverable', 'Hunter: valid (score 100)'],
    [{ status: 'invalid', result: 'undeliverable', score: 0 }, 'found', 'undeliverable', 'Hunter: invalid (score 0)'],
    [{ status: 'accept_all', result: 'risky', score: 70 }, 'found', 'risky', 'Hunter: accept_all (score 70)'],
    [{ status: 'disposable', result: 'risky', score: 50 }, 'found', 'risky', 'Hunter: disposable (score 50)'],
    [{ status: 'webmail', smtp_check: true, score: 96 }, 'found', 'deliverable', 'Hunter: webmail (score 96)'],
    [{ status: 'webmail', smtp_check: false, score: 50 }, 'unknown', 'unknown', 'Hunter: webmail (score 50)'],
    [{ status: 'unknown', result: 'risky', score: 0 }, 'unknown', 'unknown', 'Hunter: unknown (score 0)'],
    [{ status: undefined, result: 'deliverable', score: 91 }, 'found', 'deliverable', 'Hunter: deliverable (score 91)'],
    [{ status: undefined, result: 'undeliverable' }, 'found', 'undeliverable', 'Hunter: undeliverable (score 100)'],
    [{ status: undefined, result: 'risky', score: null }, 'found', 'risky', 'Hunter: risky'],
    [{ status: 'greylisted', result: undefined, score: 10 }, 'unknown', 'unknown', 'Hunter: greylisted (score 10)'],
  ])('maps %j onto outcome %p, deliverability %p, reason %p', async (data, outcome, deliverability, reason) => {
    fake.reply(verified(data));
    const answer = await lookup();
    expect(answer.outcome).toBe(outcome);
    expect(answer.items).toEqual([expect.objectContaining({ deliverability, reason, sources: ['hunter'] })]);
  });

  it('says why it could not tell in the detail, with a blocking server named', async () => {
    fake.reply(verified({ status: 'unknown', result: undefined, score: 0, block: true }));
    await expect(lookup()).resolves.toMatchObject({
      outcome: 'unknown',
      detail: 'hunter: no verdict: unknown (score 0); the mail server blocks verification',
    });
  });

  it('adds the disposable and webmail facts', async () => {
    fake.reply(verified({ status: 'disposable', disposable: true }));
    expect((await lookup()).items[0]).toMatchObject({ disposable: true, free_provider: false });
    fake.reply(verified({ status: 'webmail', webmail: true, smtp_check: true }));
    expect((await lookup()).items[0]).toMatchObject({ disposable: false, free_provider: true });
    fake.reply(verified({ status: 'invalid', disposable: true, webmail: true }));
    expect((await lookup()).items[0]).toMatchObject({ disposable: true, free_provider: true });
  });

  it('gives its catch-all and SMTP-server facts, and a sub-status from its status (ADR 0057)', async () => {
    const grade = async () => {
      const { is_catch_all, can_connect_smtp, sub_status, score } = (await lookup()).items[0]!;
      return { is_catch_all, can_connect_smtp, sub_status, score };
    };
    fake.reply(verified({ status: 'accept_all', accept_all: true, smtp_server: true }));
    expect(await grade()).toEqual({ is_catch_all: true, can_connect_smtp: true, sub_status: 'catch_all', score: 50 });
    fake.reply(verified({ status: 'valid', accept_all: false, smtp_server: true }));
    expect(await grade()).toEqual({ is_catch_all: false, can_connect_smtp: true, sub_status: 'accepted', score: 95 });
    fake.reply(verified({ status: 'disposable', accept_all: undefined, smtp_server: undefined }));
    expect(await grade()).toEqual({ is_catch_all: null, can_connect_smtp: null, sub_status: 'disposable', score: 20 });
    fake.reply(verified({ status: 'invalid', smtp_server: false }));
    expect(await grade()).toMatchObject({ can_connect_smtp: false, sub_status: 'mailbox_not_found', score: 0 });
    fake.reply(verified({ status: 'unknown', result: undefined }));
    expect(await grade()).toMatchObject({ sub_status: 'inconclusive', score: 40 });
  });

  it.each([
    [202, 'hunter: the verification is still running (202); ask again later'],
    [222, 'hunter: the mail server answered unexpectedly (222); ask again later'],
  ])('answers %i as unknown with a detail, not as an error', async (status, detail) => {
    fake.reply({ status, body: { data: { email: 'patrick@stripe.com' } } });
    await expect(lookup()).resolves.toEqual({ outcome: 'unknown', items: [], detail });
  });

  it("reads Hunter's own limits: its 403 error is its rate limit, its 429 the plan's usage limit; a 403 page is a wall", async () => {
    const limited = await outcomeOf({ status: 403, body: { errors: [{ id: 'too_many_requests', code: 403 }] } });
    expect(limited).toMatchObject({ code: 'rate_limited', message: 'hunter: its rate limit is reached (403)' });
    const quota = await outcomeOf({ status: 429, headers: { 'retry-after': '60' }, body: { errors: [{ code: 429 }] } });
    expect(quota).toMatchObject({
      code: 'rate_limited',
      message: "hunter: the plan's usage limit is reached (429)",
      retryAfterMs: 60_000,
    });
    const wall = await outcomeOf({ status: 403, body: '<html><title>Just a moment...</title></html>' });
    expect(wall).toMatchObject({ code: 'blocked' });
  });

  it('answers an address whose owner opted out at Hunter (451) as not found', async () => {
    await expect(outcomeOf({ status: 451, body: { errors: [{ id: 'claimed_email', code: 451 }] } })).resolves.toEqual({
      outcome: 'not_found',
      items: [],
    });
  });

  it("reads only Hunter's own 451 (its errors body) as an opt-out; a filtering proxy's 451 page is an error", async () => {
    for (const page of [
      { status: 451, headers: { 'content-type': 'text/html' }, body: '<html><body>Blocked by policy</body></html>' },
      { status: 451, body: '' },
    ]) {
      await expect(outcomeOf(page)).resolves.toMatchObject({
        name: 'ProviderError',
        code: 'malformed',
        message: "hunter: a 451 that is not the vendor's answer (is HUNTER_BASE_URL right?)",
      });
    }
  });

  it('refuses a status that is not one of its short codes (it would reach clients in reason)', async () => {
    const odd = await outcomeOf(verified({ status: 'Valid! <script>', result: undefined }));
    expect(odd).toMatchObject({ code: 'malformed' });
  });

  it('never puts the key in a message or a detail, and sends the normalized address', async () => {
    const answers: FakeAnswer[] = [
      { status: 202, body: '' },
      { status: 400, body: { errors: [{ id: 'wrong_params', code: 400, details: `bad api_key=${KEY}` }] } },
      { status: 401, body: { errors: [{ id: 'authentication_failed', code: 401 }] } },
      { status: 403, body: { errors: [{ id: 'too_many_requests', code: 403 }] } },
      { status: 500, body: `upstream failed for ${fake.url}/v2/email-verifier?api_key=${KEY}` },
      { status: 200, body: `{"data": "${KEY}"` },
      verified({ status: 'unknown', score: 0 }),
    ];
    for (const answer of answers) {
      const seen = await outcomeOf(answer);
      const text = seen instanceof ProviderError ? seen.message : (seen.detail ?? '');
      expect(text).not.toContain(KEY);
      expect(text).not.toMatch(/https?:\/\//);
    }
    fake.reply(FOUND);
    await lookup(' Patrick@STRIPE.com ');
    expect(fake.requests.at(-1)!.url).toBe(`/v2/email-verifier?email=Patrick%40stripe.com&api_key=${KEY}`);
  });

  describe('merged with the first-hand checks into the one e-mail item', () => {
    async function merged(firstHand: Partial<EmailResultItem>, hunter: FakeAnswer) {
      fake.reply(hunter);
      const vendor = await lookup();
      return mergeItems('email', [
        { precedence: 0, items: [emailItem('patrick@stripe.com', 'email', firstHand)] },
        { precedence: hunterProvider.precedence ?? 0, items: vendor.items },
      ])[0]!;
    }
    const invalid = verified({ status: 'invalid', result: 'undeliverable', score: 12, disposable: true });

    it('gives the verdict only when the first-hand checks could not tell', async () => {
      const item = await merged({ deliverability: 'unknown', reason: 'no MX answer' }, invalid);
      expect(item).toMatchObject({
        deliverability: 'undeliverable',
        reason: 'Hunter: invalid (score 12)',
        disposable: true,
        sources: ['email', 'hunter'],
      });
    });

    it('yields to a first-hand verdict, while its facts still add up', async () => {
      const item = await merged({ deliverability: 'deliverable', reason: 'mailbox accepted' }, invalid);
      expect(item).toMatchObject({
        deliverability: 'deliverable',
        reason: 'mailbox accepted',
        disposable: true,
        sources: ['email', 'hunter'],
      });
    });
  });
});
