import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { MAINTENANCE_QUEUE, QUEUE_NAMES, RETENTION_SCHEDULER_ID, WEBHOOK_QUEUE } from '@dossier/contracts';
import { Api, QueueProbe, REPO_ROOT, Stack, TcpProxy, ledgerState, settled, testEnv, waitFor } from '@dossier/testing';

const ADMIN = { username: 'board-admin', password: 'queue board: tr0ub4dor&3' };
/** CI keeps this file (see .ci/run); `artifacts/` is git-ignored. */
const SCREENSHOT = resolve(REPO_ROOT, 'artifacts/bull-board.png');
const BOARD = '/admin/queues';
/** Every queue the service runs: the four lookup queues, webhook deliveries and the retention schedule. */
const ALL_QUEUES = [...Object.values(QUEUE_NAMES), WEBHOOK_QUEUE, MAINTENANCE_QUEUE];
const basic = `Basic ${Buffer.from(`${ADMIN.username}:${ADMIN.password}`).toString('base64')}`;

/**
 * The queue board as an operator uses it: headless Chromium (Debian's, through playwright-core) against the
 * gateway process. A lookup job fails for real — its worker reaches Postgres through a proxy the test cuts, so
 * settling fails through all five attempts — and is retried from the board's own Retry button once Postgres
 * is back. No Chromium is a failure, never a skip.
 */
describe('the Bull board at /admin/queues in headless Chromium', () => {
  let pgProxy: TcpProxy;
  let stack: Stack;
  let api: Api;
  let queues: QueueProbe;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(testEnv.chromiumPath)) {
      throw new Error(
        `no Chromium at ${testEnv.chromiumPath}: install Debian's chromium (.ci/run does) or set CHROMIUM_PATH`,
      );
    }
    browser = await chromium.launch({
      executablePath: testEnv.chromiumPath,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    pgProxy = await TcpProxy.forUrl(testEnv.databaseUrl).start();
    stack = await Stack.start({
      label: 'board',
      gatewayEnv: { ADMIN_USER: ADMIN.username, ADMIN_PASSWORD: ADMIN.password },
      workerEnv: { DATABASE_URL: pgProxy.url(testEnv.databaseUrl) },
    });
    api = new Api(stack.baseUrl);
    queues = new QueueProbe(stack.env['QUEUE_PREFIX']!);
  });
  afterAll(async () => {
    await browser?.close();
    await queues?.close();
    await stack?.stop();
    await pgProxy?.close();
  });

  async function adminPage(): Promise<Page> {
    const context = await browser.newContext({ httpCredentials: ADMIN, viewport: { width: 1280, height: 800 } });
    return context.newPage();
  }

  it.each([
    ['no credentials', undefined],
    ['a wrong password', { username: ADMIN.username, password: 'wrong' }],
  ])('answers a browser with %s 401 and a Basic challenge, and shows no board', async (_label, httpCredentials) => {
    const context = await browser.newContext(httpCredentials ? { httpCredentials } : {});
    try {
      const page = await context.newPage();
      const answers: [number, string | undefined][] = [];
      page.on('response', (r) => {
        if (r.url() === stack.baseUrl + BOARD) answers.push([r.status(), r.headers()['www-authenticate']]);
      });
      // Headless Chromium gives up on a challenge it cannot answer (ERR_INVALID_AUTH_CREDENTIALS); with
      // credentials it has tried, it shows the 401 page. Either way the board said 401.
      const shown = await page.goto(stack.baseUrl + BOARD).then(
        (res) => res?.status(),
        (err: Error) => err.message,
      );
      expect([401, expect.stringContaining('net::ERR_INVALID_AUTH_CREDENTIALS')]).toContainEqual(shown);
      expect(answers.length).toBeGreaterThanOrEqual(1);
      for (const answer of answers) expect(answer).toEqual([401, expect.stringMatching(/^Basic realm=/)]);
      expect(await page.getByText('phone-lookup').count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('lists every queue the service runs to the admin: the lookup queues, webhook deliveries and maintenance', async () => {
    const page = await adminPage();
    try {
      const res = await page.goto(stack.baseUrl + BOARD);
      expect(res?.status()).toBe(200);
      const links = page.locator('nav a');
      await links.first().waitFor();
      const shown = await links.evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
      expect(shown.sort()).toEqual(ALL_QUEUES.map((name) => [name, `${BOARD}/queue/${name}`]).sort());
    } finally {
      await page.context().close();
    }
  });

  it('shows the webhook-delivery and maintenance queues read-only: the retention schedule listed, no action taken', async () => {
    const board = (method: string, path: string) =>
      api.request<{ queues?: { name: string; readOnlyMode: boolean; jobSchedulerCount: number }[] }>(
        method,
        `${BOARD}/api${path}`,
        { headers: { authorization: basic } },
      );
    const listed = await board('GET', '/queues');
    expect(listed.status).toBe(200);
    const modes = Object.fromEntries(listed.body.queues!.map((q) => [q.name, q.readOnlyMode]));
    expect(modes).toEqual({
      ...Object.fromEntries(Object.values(QUEUE_NAMES).map((name) => [name, false])),
      [WEBHOOK_QUEUE]: true,
      [MAINTENANCE_QUEUE]: true,
    });
    // The worker's retention scheduler, which removing or emptying from the board would stop until a restart.
    expect(listed.body.queues!.find((q) => q.name === MAINTENANCE_QUEUE)?.jobSchedulerCount).toBe(1);
    for (const [method, path] of [
      ['PUT', `/queues/${MAINTENANCE_QUEUE}/empty`],
      ['PUT', `/queues/${MAINTENANCE_QUEUE}/pause`],
      ['PUT', `/queues/${MAINTENANCE_QUEUE}/job-schedulers/${RETENTION_SCHEDULER_ID}/remove`],
      ['PUT', `/queues/${WEBHOOK_QUEUE}/clean/failed`],
      ['PUT', `/queues/${WEBHOOK_QUEUE}/pause`],
    ] as const) {
      expect({ method, path, status: (await board(method, path)).status }).toEqual({ method, path, status: 405 });
    }
    const after = await board('GET', '/queues');
    expect(after.body.queues!.find((q) => q.name === MAINTENANCE_QUEUE)?.jobSchedulerCount).toBe(1);
    // Without the admin credentials the board's API answers 401, as its page does.
    expect((await api.get(`${BOARD}/api/queues`)).status).toBe(401);
  });

  it('shows a failed lookup job with its error, and its Retry button runs it again', async () => {
    const { key, accountId } = await api.register();
    pgProxy.cut(); // the worker cannot settle: each attempt fails, the last one fails the job
    let searchId: string;
    try {
      const accepted = await api.post<{ search_id: string }>(
        '/v1/verify/phone',
        { phone: '+14155552671' },
        { key, headers: { prefer: 'respond-async' } },
      );
      expect(accepted.status).toBe(202);
      searchId = accepted.body.search_id;
      await waitFor(
        () => queues.job(QUEUE_NAMES.phone, searchId),
        (job) => job.state === 'failed',
        { timeoutMs: 40_000, what: `job ${searchId} failed after its attempts` },
      );
      // The job is marked failed before the worker tries to release its search: Postgres stays cut until
      // that try has failed too, so the search is still pending (as after a real outage) when it is retried.
      await waitFor(
        async () => stack.workers[0]!.logs,
        (logs) => logs.includes(`could not release failed job ${searchId}`),
        { timeoutMs: 10_000, what: `the worker's failed attempt to release ${searchId}` },
      );
    } finally {
      pgProxy.restore();
    }
    expect((await queues.job(QUEUE_NAMES.phone, searchId)).attemptsMade).toBe(5);

    const page = await adminPage();
    try {
      await page.goto(`${stack.baseUrl}${BOARD}/queue/${QUEUE_NAMES.phone}?status=failed`);
      const card = page.locator('div[class^="card-"]', { has: page.getByText(searchId, { exact: true }) });
      await card.waitFor();
      const shown = await card.innerText();
      expect(shown).toContain('phone.lookup');
      expect(shown).toContain('attempt #5');
      expect(shown).toMatch(/Failed at/);
      // The Error tab (open by default, drawn once its highlighter has loaded): why settling failed.
      await card
        .getByText(/ECONNRESET|ECONNREFUSED|Connection terminated/)
        .first()
        .waitFor();
      mkdirSync(resolve(SCREENSHOT, '..'), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      process.stdout.write(`queue board screenshot: ${SCREENSHOT}\n`);

      await card.locator('button:has(svg.lucide-refresh-cw)').click();
      const confirm = page.getByRole('alertdialog');
      await expect(confirm.innerText()).resolves.toContain('retry this job');
      await confirm.getByRole('button', { name: 'Confirm' }).click();

      const after = await waitFor(
        () => queues.job(QUEUE_NAMES.phone, searchId),
        (job) => job.state === 'completed',
        { timeoutMs: 20_000, what: `job ${searchId} completed after the retry` },
      );
      expect(after.state).toBe('completed');
      // The lookup settled once Postgres was back: answered and charged once.
      const done = await api.get<{ status: string; results: unknown[] }>(`/v1/searches/${searchId}`, { key });
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ status: 'success', results: [expect.anything()] });
      expect(await ledgerState(accountId)).toEqual(settled(99, { reserves: 1, captures: 1, releases: 0 }));

      // The board agrees: the job is listed under Completed now.
      await page.goto(`${stack.baseUrl}${BOARD}/queue/${QUEUE_NAMES.phone}?status=completed`);
      await page.locator('div[class^="card-"]', { has: page.getByText(searchId, { exact: true }) }).waitFor();
    } finally {
      await page.context().close();
    }
  });
});
