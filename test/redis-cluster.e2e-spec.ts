import { Cluster } from 'ioredis';
import IORedis from 'ioredis';
import { MAINTENANCE_QUEUE, QUEUE_NAMES } from '@dossier/contracts';
import { Api, RedisClusterServers, Stack, ledgerState, settled, testEnv, uniquePrefix } from '@dossier/testing';

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
  const perNode = await Promise.all(cluster.nodes('master').map((node) => node.keys(pattern)));
  return perNode.flat();
}

describe('Redis Cluster (REDIS_CLUSTER_NODES): a real three-master cluster on loopback, gateway and worker processes', () => {
  let servers: RedisClusterServers;
  let stack: Stack;
  let api: Api;
  let cluster: Cluster;
  let prefix: string;

  beforeAll(async () => {
    servers = await RedisClusterServers.start(3);
    prefix = `{${uniquePrefix('cluster')}}`;
    stack = await Stack.start({
      label: 'cluster',
      env: { REDIS_CLUSTER_NODES: servers.nodes, QUEUE_PREFIX: prefix, RETENTION_INTERVAL_MS: '500' },
    });
    api = new Api(stack.baseUrl);
    cluster = new Cluster(servers.servers.map((s) => ({ host: '127.0.0.1', port: s.port })));
  }, 120_000);
  afterAll(async () => {
    cluster?.disconnect();
    await stack?.stop();
    await servers?.stop();
  });

  it('runs a lookup of each kind through the cluster: answered, settled, readable at GET /v1/searches/{id}', async () => {
    const { key, accountId } = await api.register();
    let charged = 0;
    let balance = 100;
    for (const lookup of LOOKUPS) {
      const res = await api.post<Envelope>(lookup.path, lookup.body, { key, headers: { prefer: 'wait=20' } });
      expect([lookup.kind, res.status, res.body.status]).toEqual([lookup.kind, 200, 'success']);
      // Captured (1 credit) or released (0): the answer's balance says which.
      charged += balance - res.body.credits_remaining;
      balance = res.body.credits_remaining;
      const again = await api.get<Envelope>(`/v1/searches/${res.body.search_id}`, { key });
      expect(again.status).toBe(200);
      expect(again.body.results).toEqual(res.body.results);
    }
    expect(charged).toBeGreaterThan(0);
    expect(await ledgerState(accountId)).toEqual(
      settled(100 - charged, { reserves: 4, captures: charged, releases: 4 - charged }),
    );

    // The queues, the rate-limit bucket and the retention schedule live in the cluster, under the hash tag...
    for (const lookup of LOOKUPS) {
      expect(await clusterKeys(cluster, `${prefix}:${QUEUE_NAMES[lookup.kind]}:*`)).not.toHaveLength(0);
    }
    expect(await clusterKeys(cluster, `${prefix}:ratelimit:*`)).not.toHaveLength(0);
    expect(await clusterKeys(cluster, `${prefix}:${MAINTENANCE_QUEUE}:*`)).not.toHaveLength(0);
    // ...and nothing went to the Redis of REDIS_URL.
    const single = new IORedis(testEnv.redisUrl);
    try {
      expect(await single.keys(`${prefix}*`)).toEqual([]);
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
