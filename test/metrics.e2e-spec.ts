import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { newId } from '@dossier/domain';
import { SearchesRepository, openDataSource } from '@dossier/persistence';
import {
  Api,
  REPO_ROOT,
  Stack,
  exposedMetricNames,
  freePort,
  metricValue,
  ownDatabase,
  waitFor,
} from '@dossier/testing';

const DASHBOARD = join(REPO_ROOT, 'deploy/grafana/dossier-dashboard.json');

/** PromQL words that are not metric names: functions, aggregations, keywords. */
const PROMQL_WORDS = new Set([
  'sum',
  'avg',
  'min',
  'max',
  'count',
  'topk',
  'bottomk',
  'quantile',
  'stddev',
  'rate',
  'irate',
  'increase',
  'delta',
  'histogram_quantile',
  'clamp_min',
  'clamp_max',
  'abs',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
]);

/** The metric names a PromQL expression reads: what is left once labels, ranges, strings and words are gone. */
function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  return [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]).filter((w) => !PROMQL_WORDS.has(w));
}

type Panel = { title: string; targets?: { expr: string }[]; panels?: Panel[] };

describe('metrics (gateway + worker processes, real Redis and Postgres)', () => {
  let stack: Stack;
  let api: Api;
  let database: { url: string; drop: () => Promise<void> };
  let db: DataSource;
  let metricsUrl: string;
  let workerUrl: string;
  let key: string;
  const orphan = newId.search();
  const aged = newId.search();

  const scrape = async (url: string) => {
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    return res.text();
  };

  beforeAll(async () => {
    // A database of its own: the worker's reconciler and purge act on every row of the database they run on.
    database = await ownDatabase('metrics');
    db = await openDataSource({ url: database.url, poolSize: 1, applicationName: 'metrics-e2e' });
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}`;
    stack = await Stack.start({
      label: 'metrics',
      env: { DATABASE_URL: database.url, SIGNUP_CREDITS: '100' },
      gatewayEnv: { METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' },
      workerEnv: { RECONCILE_AFTER_S: '600', RECONCILE_INTERVAL_MS: '200' },
      noWorker: true,
    });
    api = new Api(stack.baseUrl);
    let accountId: string;
    ({ key, accountId } = await api.register());

    // Before the worker starts: a search left pending with no job (as a gateway that died before enqueueing
    // leaves it) and a settled search past RESULTS_TTL_DAYS, both made by the real repository code and then
    // moved back in time in the database.
    const [apiKey] = (await db.query(`SELECT id FROM api_keys WHERE account_id = $1`, [accountId])) as { id: string }[];
    const searches = new SearchesRepository(db);
    for (const id of [orphan, aged]) {
      const reserved = await searches.reserve({
        id,
        accountId,
        keyId: apiKey!.id,
        kind: 'phone',
        input: { phone: '+14155552671' },
        cost: 1,
        idempotencyKey: null,
        requestHash: null,
        requestId: 'req_metricse2e',
        permissiblePurpose: null,
      });
      expect(reserved.kind).toBe('reserved');
    }
    await searches.settle(aged, { status: 'succeeded', results: [], sources: [], charge: false });
    await db.query(`UPDATE searches SET created_at = now() - interval '1 hour' WHERE id = $1`, [orphan]);
    await db.query(`UPDATE searches SET created_at = now() - interval '400 days' WHERE id = $1`, [aged]);

    await stack.startWorker();
    workerUrl = stack.workerUrls[0]!;
    // The reconciler's first pass (released_stale, purged) is over before any test takes its baseline.
    await waitFor(
      () => scrape(workerUrl),
      (t) => (metricValue(t, 'dossier_reconciler_actions_total{action="released_stale"}') ?? 0) >= 1,
      { timeoutMs: 20_000, stallMs: 10_000, what: 'the reconciler releasing the stale search' },
    );
  });
  afterAll(async () => {
    await stack?.stop();
    await db?.destroy();
    await database?.drop();
  });

  describe('METRICS_PORT', () => {
    it('serves /metrics on the metrics port only: the public port answers 404 with the error envelope', async () => {
      const pub = await api.get<{ status: string; error: { code: string } }>('/metrics');
      expect(pub.status).toBe(404);
      expect(pub.body.error.code).toBe('not_found');
      const text = await scrape(metricsUrl);
      expect(text).toMatch(/^# TYPE http_requests_total counter$/m);
      expect(text).toMatch(/^dossier_queue_jobs\{queue="phone-lookup",state="waiting"\} \d+$/m);
      // The public 404 is counted like any unmatched request; nothing else is served on the metrics port.
      expect(metricValue(text, 'http_requests_total{method="GET",route="unmatched",status="404"}')).toBeGreaterThan(0);
      expect((await fetch(`${metricsUrl}/health/ready`)).status).toBe(404);
      expect((await fetch(`${metricsUrl}/metrics`, { method: 'POST' })).status).toBe(405);
    });

    it('leaves /metrics out of the OpenAPI document when it is not on the public port', async () => {
      const doc = await api.get<{ paths: Record<string, unknown> }>('/v1/openapi.json');
      expect(doc.status).toBe(200);
      expect(Object.keys(doc.body.paths)).not.toContain('/metrics');
      expect(Object.keys(doc.body.paths)).toContain('/health/ready');
    });
  });

  describe('values moving with lookups', () => {
    it('counts credits reserved (gateway), captured and released (worker), jobs and provider calls per kind', async () => {
      const [gw0, wk0] = await Promise.all([scrape(metricsUrl), scrape(workerUrl)]);
      const gw = (text: string, series: string) => metricValue(text, series) ?? NaN;

      // A phone number libphonenumber knows: found, charged. A company nobody has: not found, free.
      const phone = await api.post<{ status: string }>('/v1/verify/phone', { phone: '+1 650 253 0000' }, { key });
      expect(phone.status).toBe(200);
      const company = await api.post<{ status: string; results: unknown[] }>(
        '/v1/search/company',
        { company_name: 'Qzxv Wyxkpl Metrics GmbH', country: 'DE' },
        { key },
      );
      expect(company.status).toBe(200);
      expect(company.body.results).toEqual([]);
      // Refused before anything is reserved.
      const refused = await api.post('/v1/verify/phone', { phone: '+1 650 253 0000' }, { key: 'dsk_not-a-key' });
      expect(refused.status).toBe(401);

      const [gw1, wk1] = await Promise.all([scrape(metricsUrl), scrape(workerUrl)]);
      // A series first observed by these lookups is absent before them (0); after them it must be there.
      const moved = (before: string, after: string, series: string) =>
        gw(after, series) - (metricValue(before, series) ?? 0);

      expect({
        gatewayReservedPhone: moved(gw0, gw1, 'dossier_credits_total{kind="phone",phase="reserved"}'),
        gatewayReservedCompany: moved(gw0, gw1, 'dossier_credits_total{kind="company",phase="reserved"}'),
        gatewayReservedEmail: moved(gw0, gw1, 'dossier_credits_total{kind="email",phase="reserved"}'),
        workerCapturedPhone: moved(wk0, wk1, 'dossier_credits_total{kind="phone",phase="captured"}'),
        workerReleasedPhone: moved(wk0, wk1, 'dossier_credits_total{kind="phone",phase="released"}'),
        workerCapturedCompany: moved(wk0, wk1, 'dossier_credits_total{kind="company",phase="captured"}'),
        workerReleasedCompany: moved(wk0, wk1, 'dossier_credits_total{kind="company",phase="released"}'),
        phoneJobs: moved(wk0, wk1, 'dossier_job_duration_seconds_count{queue="phone-lookup",outcome="completed"}'),
        companyJobs: moved(wk0, wk1, 'dossier_job_duration_seconds_count{queue="company-lookup",outcome="completed"}'),
        libphonenumberFound: moved(wk0, wk1, 'dossier_provider_calls_total{provider="libphonenumber",outcome="found"}'),
        libphonenumberFoundTimed: moved(
          wk0,
          wk1,
          'dossier_provider_call_duration_seconds_count{provider="libphonenumber",outcome="found"}',
        ),
        localNotFound: moved(wk0, wk1, 'dossier_provider_calls_total{provider="local",outcome="not_found"}'),
      }).toEqual({
        gatewayReservedPhone: 1,
        gatewayReservedCompany: 1,
        gatewayReservedEmail: 0,
        workerCapturedPhone: 1,
        workerReleasedPhone: 0,
        workerCapturedCompany: 0,
        workerReleasedCompany: 1,
        phoneJobs: 1,
        companyJobs: 1,
        libphonenumberFound: 1,
        libphonenumberFoundTimed: 1,
        localNotFound: 1,
      });
      // The gateway captures nothing and the worker reserves nothing: each counts what it does itself.
      expect(gw(gw1, 'dossier_credits_total{kind="phone",phase="captured"}')).toBe(0);
      expect(gw(wk1, 'dossier_credits_total{kind="phone",phase="reserved"}')).toBe(0);
      const buckets = wk1.split('\n').filter((l) => l.startsWith('dossier_job_duration_seconds_bucket{'));
      expect(buckets.some((l) => l.includes('queue="phone-lookup"') && l.includes('le="+Inf"'))).toBe(true);
    });

    it('counts the reconciler releasing a stale search and purging an old one', async () => {
      // The purge runs in a maintenance pass of its own: wait for it rather than assume it came with the release.
      const text = await waitFor(
        () => scrape(workerUrl),
        (t) => (metricValue(t, 'dossier_reconciler_actions_total{action="purged"}') ?? 0) >= 1,
        { timeoutMs: 20_000, stallMs: 10_000, what: 'the purge of the old search' },
      );
      expect(metricValue(text, 'dossier_reconciler_actions_total{action="released_stale"}')).toBe(1);
      expect(metricValue(text, 'dossier_reconciler_actions_total{action="purged"}')).toBe(1);
      const [row] = (await db.query(`SELECT status FROM searches WHERE id = $1`, [orphan])) as { status: string }[];
      expect(row!.status).toBe('failed');
      const [old] = (await db.query(`SELECT input FROM searches WHERE id = $1`, [aged])) as { input: unknown }[];
      expect(old!.input).toBeNull();
      // The release went through the ledger like any other: counted as released phone credits by the worker.
      expect(metricValue(text, 'dossier_credits_total{kind="phone",phase="released"}')).toBeGreaterThanOrEqual(1);
    });
  });

  describe('the Grafana dashboard (deploy/grafana/dossier-dashboard.json)', () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[] };
    const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
    const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

    it('reads only metrics a running gateway or worker exposes', async () => {
      const exposed = new Set([
        ...exposedMetricNames(await scrape(metricsUrl)),
        ...exposedMetricNames(await scrape(workerUrl)),
      ]);
      const used = exprs.flatMap(({ panel, expr }) => metricNamesIn(expr).map((name) => ({ panel, name })));
      expect(used.length).toBeGreaterThan(exprs.length - 1);
      expect(used.filter(({ name }) => !exposed.has(name))).toEqual([]);
    });

    it('covers requests, queues, jobs, credits, providers and the reconciler', () => {
      const used = new Set(exprs.flatMap(({ expr }) => metricNamesIn(expr)));
      for (const name of [
        'http_requests_total',
        'http_request_duration_seconds_bucket',
        'dossier_queue_jobs',
        'dossier_job_duration_seconds_bucket',
        'dossier_credits_total',
        'dossier_provider_calls_total',
        'dossier_provider_call_duration_seconds_bucket',
        'dossier_reconciler_actions_total',
      ]) {
        expect([name, used.has(name)]).toEqual([name, true]);
      }
    });

    it('finds the metric names in PromQL (the extraction itself)', () => {
      expect(
        metricNamesIn(
          'histogram_quantile(0.95, sum by (le, queue) (rate(dossier_job_duration_seconds_bucket{queue=~"a|b"}[$__rate_interval])))',
        ),
      ).toEqual(['dossier_job_duration_seconds_bucket']);
      expect(metricNamesIn('sum(rate(a_total{x="y"}[5m])) / on (k) group_left sum(b_total)')).toEqual([
        'a_total',
        'b_total',
      ]);
    });
  });
});
