import { DomainError } from '@dossier/domain';
import { loadGatewayConfig } from '@dossier/config';
import type { RedisClient } from '@dossier/runtime';
import { usernameSitesKey, type UsernameSitesReport } from '@dossier/contracts';
import { UsernameSitesService } from './username-sites.service';

const config = loadGatewayConfig({ QUEUE_PREFIX: 'spec' });
const REPORT: UsernameSitesReport = {
  v: 1,
  checked_at: '2026-12-06T23:00:00.000Z',
  worker: 'host/1',
  sites: [
    { name: 'GitHub', tags: ['coding'], rank: 10 },
    { name: 'Steam', tags: ['gaming'], rank: 650 },
  ],
};

/** The service over a Redis that holds `value` at the workers' key (and nothing else). */
function service(value: string | null) {
  const redis = {
    get: (key: string) => Promise.resolve(key === usernameSitesKey('spec') ? value : null),
  } as unknown as RedisClient;
  return new UsernameSitesService(config, redis);
}

function detailsOf(check: () => void): unknown {
  try {
    check();
  } catch (err) {
    if (err instanceof DomainError) return [err.code, err.details];
    throw err;
  }
  return 'accepted';
}

const person = (input: Record<string, unknown>) => ({ kind: 'person' as const, input: { username: 'g', ...input } });

describe("UsernameSitesService: a search's sites and tags against the workers' list", () => {
  it('refuses names and tags no site has, and a choice of no site, naming the field', async () => {
    const sites = service(JSON.stringify(REPORT));
    await sites.list();
    expect(
      detailsOf(() => sites.check(person({ sites: ['github', 'Myspace'], tags: ['Coding', 'knitting'] }))),
    ).toEqual([
      'validation_error',
      [
        { field: 'sites', issue: 'no site named "Myspace" is checked (GET /v1/username/sites lists them)' },
        { field: 'tags', issue: 'no site carries the tag "knitting" (GET /v1/username/sites lists them)' },
      ],
    ]);
    expect(detailsOf(() => sites.check(person({ sites: ['Steam'], tags: ['coding'] })))).toEqual([
      'validation_error',
      [{ field: 'tags', issue: 'no site of those named in sites carries any of these tags' }],
    ]);
    expect(detailsOf(() => sites.check(person({ sites: ['GITHUB'], top: 1 })))).toBe('accepted');
    expect(detailsOf(() => sites.check(person({})))).toBe('accepted');
    expect(detailsOf(() => sites.check({ kind: 'phone', input: { phone: '+14155552671' } }))).toBe('accepted');
  });

  it('lets names through while no worker has reported its sites (the worker says which it lacks), and lists none', async () => {
    const sites = service(null);
    await expect(sites.list()).rejects.toMatchObject({ code: 'unavailable' });
    expect(detailsOf(() => sites.check(person({ sites: ['Myspace'] })))).toBe('accepted');
  });

  it('reads a report of another version as none', async () => {
    const sites = service(JSON.stringify({ ...REPORT, v: 2 }));
    await expect(sites.list()).rejects.toMatchObject({ code: 'unavailable' });
  });
});
