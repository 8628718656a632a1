import { Cluster } from 'ioredis';
import IORedis from 'ioredis';
import { MAINTENANCE_QUEUE, QUEUE_NAMES, WEBHOOK_QUEUE } from '@dossier/contracts';
import { Api, QueueProbe, RedisClusterServers, Stack, ledgerState, receiver, settled, testEnv } from '@dossier/testing';

interface Envelope {
  status: string;
  search_id: string;
  results: unknown[];
  credits_remaining: number;
}

/** One lookup of each kind, as the API takes them (no local data: person and company find nothing). */
const LOOKUPS: { kind: keyof typeof QUEUE_NAMES; path: string; body: object }[] = [
  { kind: 'person', path: '/v1/search/person', body: { name: 'Jane Q. Nobody' } },
  { kind: 'company', path: '/v1/search/company', body: { company_name: 'Nobody Holdings GmbH', country: 'DE' } },
  { kind: 'email', path: '/v1/verify/email', body: { email: 'jane@example.com' } },
  { kind: 'phone', path: '/v1/verify/phone', body: { phone: '+14155552671' } },
];

/** Every key under `pattern` on every master of the cluster. */
async function clusterKeys(cluster: Cluster, pattern: string): Promise<string[]> {
  return (await keysByMaster(cluster, pattern)).flatMap(([, keys]) => keys);
}

/** The masters (`host:port`) holding keys under `pattern`, with those keys. */
async function keysByMaster(cluster: Cluster, pattern: string): Promise<[string, string[]][]> {
  const perNode = await Promise.all(
    cluster.nodes('master').map(async (node): Promise<[string, string[]]> => {
      return [`${node.options.host}:${node.options.port}`, await node.keys(pattern)];
    }),
  );
  return perNode.filter(([, keys]) => keys.length > 0);
}

describe('Redis Cluster (REDIS_CLUSTER_NODES): a real three-master cluster on loopback, gateway and worker processes', () => {
  let servers: RedisClusterServers;
  let stack: Stack;
  let api: Api;
  let cluster: Cluster;
  // The default with a cluster, spelt out: the cluster is this test's own, so no other run shares its keys.
  const prefix = '{dossier}';

  beforeAll(async () => {
    servers = await RedisClusterServers.start(3);
    stack = await Stack.start({
      label: 'cluster',
      env: {
        REDIS_CLUSTER_NODES: servers.nodes,
        QUEUE_PREFIX: prefix,
        RETENTION_INTERVAL_MS: '500',
        WEBHOOK_ALLOW_PRIVATE: 'true',
      },
    });
    api = new Api(stack.baseUrl);
    cluster = new Cluster(servers.servers.map((s) => ({ host: '127.0.0.1', port: s.port })));
  }, 120_000);
  afterAll(async () => {
    cluster?.disconnect();
    await stack?.stop();
    await servers?.stop();
  });

  it('runs a lookup of each kind through the cluster: answered, settled, its event delivered, each queue on its own tag', async () => {
    const { key, accountId } = await api.register();
    const hook = await receiver([]);
    const probe = new QueueProbe(prefix, {
      url: testEnv.redisUrl,
      clusterNodes: servers.servers.map((s) => ({ host: '127.0.0.1', port: s.port })),
    });
    try {
      expect((await api.post('/v1/webhooks', { url: hook.url }, { key })).status).toBe(201);
      let charged = 0;
      let balance = 100;
      const searchIds: string[] = [];
      for (const lookup of LOOKUPS) {
        const res = await api.post<Envelope>(lookup.path, lookup.body, { key, headers: { prefer: 'wait=20' } });
        expect([lookup.kind, res.status, res.body.status]).toEqual([lookup.kind, 200, 'success']);
        // Captured (1 credit) or released (0): the answer's balance says which.
        charged += balance - res.body.credits_remaining;
        balance = res.body.credits_remaining;
        const again = await api.get<Envelope>(`/v1/searches/${res.body.search_id}`, { key });
        expect(again.status).toBe(200);
        expect(again.body.results).toEqual(res.body.results);
        // The job ran from its kind's queue, read under that queue's own prefix.
        expect(await probe.state(QUEUE_NAMES[lookup.kind], res.body.search_id)).toBe('completed');
        searchIds.push(res.body.search_id);
      }
      expect(charged).toBeGreaterThan(0);
      expect(await ledgerState(accountId)).toEqual(
        settled(100 - charged, { reserves: 4, captures: charged, releases: 4 - charged }),
      );
      // Each search's search.completed event went through the webhook queue, on its own tag too.
      const events = await hook.events<{ search_id: string }>(4, 'four search events');
      expect(events.map((e) => [e.type, e.data.search_id]).sort()).toEqual(
        searchIds.map((id) => ['search.completed', id]).sort(),
      );
    } finally {
      await Promise.all([probe.close(), hook.close()]);
    }

    // Each queue's keys (its jobs, its events stream) live in one slot, its own tag's, on one master...
    const masters = new Set<string>();
    for (const queue of [...LOOKUPS.map((l) => QUEUE_NAMES[l.kind]), WEBHOOK_QUEUE, MAINTENANCE_QUEUE]) {
      const tag = `{dossier-${queue}}`;
      const held = await keysByMaster(cluster, `${tag}:${queue}:*`);
      expect([queue, held.length]).toEqual([queue, 1]);
      const keys = held[0]![1];
      expect(keys).toContain(`${tag}:${queue}:events`);
      const slots = new Set(await Promise.all(keys.map((k) => cluster.cluster('KEYSLOT', k))));
      expect([queue, [...slots]]).toEqual([queue, [await cluster.cluster('KEYSLOT', tag)]]);
      if (queue !== WEBHOOK_QUEUE && queue !== MAINTENANCE_QUEUE) masters.add(held[0]![0]);
    }
    // ...and the four lookup queues are spread over more than one master (the default tags over an even
    // three-master layout: e-mail's slot on one master, the other three on another).
    expect(masters.size).toBeGreaterThanOrEqual(2);
    // No queue key is left under the shared tag; the rate-limit buckets keep it.
    expect(await clusterKeys(cluster, `${prefix}:*-lookup:*`)).toEqual([]);
    expect(await clusterKeys(cluster, `${prefix}:ratelimit:*`)).not.toHaveLength(0);
    // Nothing went to the Redis of REDIS_URL.
    const single = new IORedis(testEnv.redisUrl);
    try {
      expect(await single.keys('{dossier*')).toEqual([]);
    } finally {
      single.disconnect();
    }
  });

  it('revokes a key on every gateway through the cluster (the marker checked in the rate-limit script)', async () => {
    const { key } = await api.register();
    const created = await api.post<{ api_key: string; key_id: string }>('/v1/auth/keys', { name: 'c' }, { key });
    const second = await stack.startGateway();
    const other = new Api(second.baseUrl);
    // The second gateway has the key cached when the first one revokes it.
    expect((await other.get('/v1/account', { key: created.body.api_key })).status).toBe(200);
    expect((await api.request('DELETE', `/v1/auth/keys/${created.body.key_id}`, { key })).status).toBe(200);
    expect((await other.get('/v1/account', { key: created.body.api_key })).status).toBe(401);
  });
});
