import { FakeDns } from '@dossier/testing';
import { RESOLVER_CANARY, ResolverSanityCache, type ResolverSanity } from './resolver-sanity';

describe('resolver sanity (the canary)', () => {
  let sane: FakeDns;
  let lying: FakeDns;
  beforeAll(async () => {
    [sane, lying] = await Promise.all([FakeDns.start(), FakeDns.lying()]);
  });
  afterAll(async () => {
    await Promise.all([sane?.close(), lying?.close()]);
  });

  const canaryQueries = (dns: FakeDns) => dns.queries.filter((q) => q.name === 'com');

  it('asks for the NS records of com., a name that always exists, written absolute', async () => {
    expect(RESOLVER_CANARY).toBe('com.');
    const before = canaryQueries(sane).length;
    await expect(new ResolverSanityCache().of([sane.server])).resolves.toEqual({ trusted: true });
    expect(canaryQueries(sane).slice(before)).toEqual([{ name: 'com', type: 'NS' }]);
  });

  it('trusts a resolver that answers the canary without records of the type (NODATA: the name exists)', async () => {
    // FakeDns answers `com` NOERROR with no records: what c-ares reports as ENODATA.
    await expect(new ResolverSanityCache().of([sane.server])).resolves.toEqual({ trusted: true });
  });

  it('does not trust a resolver that answers NXDOMAIN for the canary, and says why', async () => {
    await expect(new ResolverSanityCache().of([lying.server])).resolves.toEqual({
      trusted: false,
      detail: 'it answers NXDOMAIN for com, a top-level domain that always exists: this resolver cannot be trusted',
    });
  });

  it('does not trust a resolver that cannot be asked, and says what went wrong', async () => {
    await expect(new ResolverSanityCache().of(['127.0.0.1:9'])).resolves.toEqual({
      trusted: false,
      detail:
        'asked for com, a top-level domain that always exists, no DNS server answers at the configured address (connection refused): this resolver cannot be trusted',
    });
  });

  it('asks each resolver set once per period, however many ask meanwhile, and again once it is over', async () => {
    let now = 1_000;
    const asked: (readonly string[] | null)[] = [];
    const cache = new ResolverSanityCache(
      60_000,
      (servers) => {
        asked.push(servers);
        return Promise.resolve<ResolverSanity>({ trusted: true });
      },
      () => now,
    );
    await Promise.all([cache.of(['10.0.0.1']), cache.of(['10.0.0.1']), cache.of(null), cache.of(null)]);
    expect(asked).toEqual([['10.0.0.1'], null]);
    now += 59_999;
    await cache.of(['10.0.0.1']);
    expect(asked).toHaveLength(2);
    now += 1;
    await cache.of(['10.0.0.1']);
    expect(asked).toEqual([['10.0.0.1'], null, ['10.0.0.1']]);
  });
});
