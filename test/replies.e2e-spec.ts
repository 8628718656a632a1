import { Redis } from 'ioredis';
import { Api, Stack, testEnv, waitFor, withFaults } from '@dossier/testing';

interface Envelope {
  status: string;
  search_id: string;
  credits_remaining: number;
}

const PHONE = { phone: '+14155552671' };

/**
 * Completion delivery (ADR 0024): each gateway hears only its own lookups' results, on its own reply
 * channel; one that waits for a search another gateway queued (an idempotent replay) still answers,
 * through the Postgres fallback. Two gateway processes and one worker, real Redis and Postgres; the test
 * listens on every reply channel of the stack's prefix to see where each result went.
 */
describe('reply channels (two gateways + a worker as processes, real Redis and Postgres)', () => {
  let stack: Stack;
  let a: Api;
  let b: Api;
  let listener: Redis;
  const heard: { channel: string; searchId: string }[] = [];

  beforeAll(async () => {
    stack = await Stack.start({ label: 'replies', workerEnv: withFaults({ holdLookups: { at: 'before', ms: 300 } }) });
    a = new Api(stack.baseUrl);
    b = new Api((await stack.startGateway()).baseUrl);
    listener = new Redis(testEnv.redisUrl);
    listener.on('pmessage', (_pattern: string, channel: string, message: string) => {
      heard.push({ channel, searchId: (JSON.parse(message) as { search_id: string }).search_id });
    });
    await listener.psubscribe(`${stack.env['QUEUE_PREFIX']!}:replies:*`);
  });
  afterAll(async () => {
    listener?.disconnect();
    await stack?.stop();
  });

  it("sends each lookup's result to the gateway that queued it, and to no other", async () => {
    const { key } = await a.register();
    const viaA = await Promise.all(
      Array.from({ length: 4 }, () => a.post<Envelope>('/v1/verify/phone', PHONE, { key })),
    );
    const viaB = await Promise.all(
      Array.from({ length: 3 }, () => b.post<Envelope>('/v1/verify/phone', PHONE, { key })),
    );
    for (const res of [...viaA, ...viaB]) expect(res.status).toBe(200);
    // the test's own subscription may hear a message a moment after the gateway that answered
    const ids = [...viaA, ...viaB].map((r) => r.body.search_id);
    await waitFor(
      () => Promise.resolve(heard),
      (h) => ids.every((id) => h.some((x) => x.searchId === id)),
      { timeoutMs: 5000, what: 'every result to be published' },
    );

    const channelsOf = (answers: { body: Envelope }[]) =>
      new Set(answers.flatMap((r) => heard.filter((h) => h.searchId === r.body.search_id).map((h) => h.channel)));
    const [channelA, ...moreA] = channelsOf(viaA);
    const [channelB, ...moreB] = channelsOf(viaB);
    expect(moreA).toEqual([]);
    expect(moreB).toEqual([]);
    expect(channelA).toMatch(/:replies:gw_[0-9A-Za-z]{20}$/);
    expect(channelB).toMatch(/:replies:gw_[0-9A-Za-z]{20}$/);
    expect(channelA).not.toBe(channelB);
    // one message per lookup
    for (const res of [...viaA, ...viaB])
      expect(heard.filter((h) => h.searchId === res.body.search_id)).toHaveLength(1);
  });

  it('answers a replay on another gateway, whose channel hears nothing of it, through the Postgres fallback', async () => {
    const { key } = await a.register();
    const headers = { 'idempotency-key': 'replay-across-gateways' };
    const first = await a.post<Envelope>('/v1/verify/phone', PHONE, {
      key,
      headers: { ...headers, prefer: 'respond-async' },
    });
    expect(first.status).toBe(202);
    const replay = await b.post<Envelope>('/v1/verify/phone', PHONE, {
      key,
      headers: { ...headers, prefer: 'wait=10' },
    });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ status: 'success', search_id: first.body.search_id });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    await waitFor(
      () => Promise.resolve(heard),
      (h) => h.some((x) => x.searchId === first.body.search_id),
      { timeoutMs: 5000, what: 'the result to be published' },
    );
    const where = heard.filter((h) => h.searchId === first.body.search_id).map((h) => h.channel);
    expect(where).toHaveLength(1);
  });
});
