import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { AccountsRepository, SearchHistoryRepository, openDataSource } from '@dossier/persistence';
import { DIST, ownDatabase, runCli } from '@dossier/testing';
import {
  AUDIT_COLUMNS,
  exportAudit,
  parseAuditExportArgs,
  type AuditExportCommand,
  type AuditRecord,
} from './audit-export';

type Row = AuditRecord;

const LARGE = 20_000;

/**
 * `audit:export` as an operator runs it (the compiled CLI as a process, on a database of its own), plus the
 * streaming itself read in-process: batches are read one at a time, each written before the next is read.
 */
describe('CLI audit:export (real Postgres)', () => {
  // Filled in by beforeAll with the file's own database (ownDatabase).
  const env = { DATABASE_URL: '' };
  let database: Awaited<ReturnType<typeof ownDatabase>> | undefined;
  let db: Client;

  const cli = (...args: string[]) => runCli(['audit:export', ...args], env);
  const jsonl = (stdout: string) =>
    stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Row);

  /** Two accounts' searches at fixed times, one per outcome; a third account with none. */
  const ADA = 'ada@example.com';
  const ODD = 'o"brien, jr@example.com'; // stored as is, to exercise CSV quoting
  const EXPECTED: Row[] = [
    {
      search_id: 'srch_a1',
      account: ADA,
      key_id: 'key_ada1',
      kind: 'person',
      permissible_purpose: 'employment',
      request_id: 'req_1',
      created_at: '2026-01-10T08:00:00.000Z',
      completed_at: '2026-01-10T08:00:01.000Z',
      outcome: 'succeeded',
      credits: 3,
    },
    {
      search_id: 'srch_o1',
      account: ODD,
      key_id: 'key_odd',
      kind: 'phone',
      permissible_purpose: 'tenant, "screening"\nsecond line',
      request_id: 'req_2',
      created_at: '2026-01-31T23:59:59.999Z',
      completed_at: '2026-02-01T00:00:00.100Z',
      outcome: 'succeeded',
      credits: 0,
    },
    {
      search_id: 'srch_a2',
      account: ADA,
      key_id: 'key_ada2',
      kind: 'company',
      permissible_purpose: null,
      request_id: 'req_3',
      created_at: '2026-02-01T00:00:00.000Z',
      completed_at: '2026-02-01T00:00:02.000Z',
      outcome: 'failed',
      credits: 0,
    },
    {
      search_id: 'srch_a3',
      account: ADA,
      key_id: 'key_ada1',
      kind: 'email',
      permissible_purpose: 'fraud_prevention',
      request_id: 'req_4',
      created_at: '2026-02-15T12:30:00.000Z',
      completed_at: null,
      outcome: 'pending',
      credits: 1,
    },
  ];

  beforeAll(async () => {
    database = await ownDatabase('audit');
    env.DATABASE_URL = database.url;
    db = new Client({ connectionString: env.DATABASE_URL });
    await db.connect();
    await db.query(
      `INSERT INTO accounts (id, email, email_normalized, password_hash, balance) VALUES
         ('acct_ada', $1, lower($1), 'x', 0), ('acct_odd', $2, lower($2), 'x', 0),
         ('acct_none', 'none@example.com', 'none@example.com', 'x', 0), ('acct_big', 'big@example.com', 'big@example.com', 'x', 0)`,
      [ADA, ODD],
    );
    const charged = { succeeded: [3, true], failed: [2, false], pending: [1, null] } as const;
    for (const r of EXPECTED) {
      const [cost, charge] = r.search_id === 'srch_o1' ? [1, false] : charged[r.outcome as keyof typeof charged];
      await db.query(
        `INSERT INTO searches (id, account_id, key_id, kind, input, status, cost, charged, request_id, permissible_purpose,
                               created_at, completed_at)
         VALUES ($1, $2, $3, $4, '{}', $5, $6, $7, $8, $9, $10, $11)`,
        [
          r.search_id,
          r.account === ADA ? 'acct_ada' : 'acct_odd',
          r.key_id,
          r.kind,
          r.outcome,
          cost,
          charge,
          r.request_id,
          r.permissible_purpose,
          r.created_at,
          r.completed_at,
        ],
      );
    }
    // The large account: 20,000 searches in 2025, a millisecond apart.
    await db.query(
      `INSERT INTO searches (id, account_id, key_id, kind, input, status, cost, charged, request_id, created_at, completed_at)
       SELECT 'srch_big' || lpad(i::text, 6, '0'), 'acct_big', 'key_big', 'phone', '{}', 'succeeded', 1, true, 'req_big' || i,
              '2025-06-01T00:00:00Z'::timestamptz + make_interval(secs => i / 1000.0), '2025-06-01T00:00:00Z'::timestamptz
         FROM generate_series(1, ${LARGE}) AS i`,
    );
  });
  afterAll(async () => {
    await db?.end();
    await database?.drop();
  });

  it('writes one JSON line per search, oldest first, with who, what, why, when, outcome and credits', async () => {
    const run = await cli('--from', '2026-01-01');
    expect(run.code).toBe(0);
    expect(jsonl(run.stdout)).toEqual(EXPECTED);
    expect(Object.keys(jsonl(run.stdout)[0]!)).toEqual(AUDIT_COLUMNS);
    // Not a terminal: no progress bar, one summary line.
    expect(run.stderr).toBe('audit:export: 4 search(es)\n');
  });

  it('writes CSV with a header, quoting commas, quotes and line breaks (RFC 4180)', async () => {
    const run = await cli('--format', 'csv', '--from', '2026-01-01T00:00:00Z');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\r\n');
    expect(lines[0]).toBe(AUDIT_COLUMNS.join(','));
    expect(run.stdout).toContain('"o""brien, jr@example.com"');
    expect(run.stdout).toContain('"tenant, ""screening""\nsecond line"');
    const records = parse(run.stdout, { columns: true }) as Record<string, string>[];
    expect(records).toEqual(
      EXPECTED.map((r) => Object.fromEntries(AUDIT_COLUMNS.map((c) => [c, r[c] === null ? '' : String(r[c])]))),
    );
  });

  it('filters by --from and --to (a date includes its whole day; a time is exclusive) and by --account', async () => {
    const ids = async (...args: string[]) => {
      const run = await cli(...args);
      expect([args, run.code, run.stderr]).toEqual([args, 0, expect.stringMatching(/^audit:export: \d+ search/)]);
      return jsonl(run.stdout).map((r) => r.search_id);
    };
    expect(await ids('--from', '2026-01-01', '--to', '2026-01-31')).toEqual(['srch_a1', 'srch_o1']);
    expect(await ids('--from', '2026-01-01', '--to', '2026-02-01T00:00:00Z')).toEqual(['srch_a1', 'srch_o1']);
    expect(await ids('--from', '2026-02-01T00:00:00Z')).toEqual(['srch_a2', 'srch_a3']);
    expect(await ids('--from', '2026-02-01T01:00:00+01:00', '--to', '2026-02-15T12:30:00Z')).toEqual(['srch_a2']);
    expect(await ids('--account', 'ADA@example.com')).toEqual(['srch_a1', 'srch_a2', 'srch_a3']);
    expect(await ids('--account', ADA, '--from', '2026-02-02')).toEqual(['srch_a3']);
    // A time is compared to the microsecond (srch_o1 is at …59.999000), not cut to the millisecond.
    expect(await ids('--from', '2026-01-31T23:59:59.9995Z', '--to', '2026-02-01')).toEqual(['srch_a2']);
    expect(await ids('--from', '2026-01-31', '--to', '2026-01-31T23:59:59.9991Z')).toEqual(['srch_o1']);
  });

  it('exports nothing (a CSV header only) for an account without searches, and refuses an unknown account', async () => {
    const none = await cli('--account', 'none@example.com', '--format', 'csv');
    expect(none).toEqual({ code: 0, stdout: `${AUDIT_COLUMNS.join(',')}\r\n`, stderr: 'audit:export: 0 search(es)\n' });
    const jsonNone = await cli('--account', 'none@example.com');
    expect(jsonNone).toMatchObject({ code: 0, stdout: '' });
    const unknown = await cli('--account', 'nobody@example.com');
    expect(unknown).toEqual({
      code: 1,
      stdout: '',
      stderr: 'audit:export: no account with e-mail nobody@example.com\n',
    });
  });

  it.each([
    [['--form', '2026-01-01'], /--form/],
    [['--from'], /--from/],
    [['--from', 'yesterday'], /--from "yesterday" must be a date/],
    [['--to', '2026-02-30'], /--to "2026-02-30"/],
    [['--from', '2026-02-01', '--to', '2026-01-01'], /--to must be later than --from/],
    [['--format', 'xml'], /--format is one of jsonl, csv, not "xml"/],
    [['--account', 'ada'], /--account "ada" is not an e-mail address/],
    [['extra'], /extra/],
  ])('refuses %j with a message naming the flag, exit 2', async (args, message) => {
    const run = await cli(...args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
    expect(run.stderr.split('\n')[0]).toMatch(/^audit:export: /);
  });

  it(`streams ${LARGE} searches in order, each once`, async () => {
    const run = await cli('--account', 'big@example.com', '--format', 'csv');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\r\n').filter(Boolean);
    expect(lines).toHaveLength(LARGE + 1);
    const ids = lines.slice(1).map((l) => l.split(',')[0]!);
    expect(new Set(ids).size).toBe(LARGE);
    expect(ids).toEqual([...ids].sort());
    expect(run.stderr).toBe(`audit:export: ${LARGE} search(es)\n`);
  });

  it('says the output was closed, not that Postgres is unreachable, when its reader stops early (| head), exit 1', async () => {
    const child = spawn(process.execPath, [DIST.cli, 'audit:export', '--account', 'big@example.com'], {
      env: { PATH: process.env['PATH'] ?? '', DATABASE_URL: env.DATABASE_URL },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // As `| head -1` does: read the first chunk, then close the pipe while the export still writes.
    await once(child.stdout, 'data');
    child.stdout.destroy();
    const [code] = (await once(child, 'close')) as [number | null];
    expect(stderr).not.toMatch(/Postgres/);
    expect(stderr).toMatch(
      /^audit:export: cannot write the output \(write EPIPE\) after \d+ search\(es\): incomplete\n$/,
    );
    expect(code).toBe(1);
  });

  describe('in process', () => {
    let ds: DataSource;
    beforeAll(async () => {
      ds = await openDataSource({ url: env.DATABASE_URL, poolSize: 2, applicationName: 'audit-spec' });
    });
    afterAll(async () => {
      await ds?.destroy();
    });

    /** The real repository, counting the batches it has been asked for. */
    class CountingHistory extends SearchHistoryRepository {
      batches = 0;
      override auditPage(...args: Parameters<SearchHistoryRepository['auditPage']>) {
        this.batches++;
        return super.auditPage(...args);
      }
    }

    const command = (over: Partial<AuditExportCommand> = {}): AuditExportCommand => {
      const parsed = parseAuditExportArgs(['--account', 'big@example.com']);
      if (typeof parsed === 'string') throw new Error(parsed);
      return { ...parsed, ...over };
    };

    it('reads a batch only after writing the one before, waiting while the output is full', async () => {
      const history = new CountingHistory(ds);
      const BATCH = 500;
      const seen: { batches: number; linesBefore: number }[] = [];
      let lines = 0;
      // A slow, small-buffered consumer: write() reports full after every chunk until it has drained.
      const out = new Writable({
        highWaterMark: 1,
        write(chunk: Buffer, _enc, done) {
          seen.push({ batches: history.batches, linesBefore: lines });
          lines += chunk.toString().split('\n').length - 1;
          setImmediate(done);
        },
      });
      const err = new Writable({ write: (_c, _e, done) => done() });
      const code = await exportAudit({ history, accounts: new AccountsRepository(ds) }, command(), {
        out,
        err,
        batchSize: BATCH,
      });
      expect(code).toBe(0);
      expect(lines).toBe(LARGE);
      expect(history.batches).toBe(LARGE / BATCH + 1); // the last, empty read says the end
      // Chunk k was written when k + 1 batches had been read: never a batch ahead of the output.
      expect(seen).toEqual(seen.map((_s, k) => ({ batches: k + 1, linesBefore: k * BATCH })));
    });

    it('draws a progress bar on a terminal, on stderr, counting up to the total', async () => {
      let drawn = '';
      const tty = Object.assign(
        new Writable({
          write(chunk: Buffer, _enc, done) {
            drawn += chunk.toString();
            done();
          },
        }),
        { isTTY: true, columns: 120, cursorTo: () => true, clearLine: () => true, moveCursor: () => true },
      );
      let out = 0;
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          out += chunk.length;
          done();
        },
      });
      const history = new SearchHistoryRepository(ds);
      const code = await exportAudit({ history, accounts: new AccountsRepository(ds) }, command(), {
        out: sink,
        err: tty,
        batchSize: 5_000,
      });
      expect(code).toBe(0);
      expect(out).toBeGreaterThan(0);
      expect(drawn).toMatch(/audit:export \[=+\] 100% \| 20000\/20000 searches/);
      // cli-progress redraws at most 10 times a second, so which batches in between are drawn depends on
      // the machine's speed: the first frame and the last are certain.
      expect(drawn).toMatch(/audit:export \[-+\] 0% \| 0\/20000 searches/);
      expect(drawn).toContain(`audit:export: ${LARGE} search(es)`);
    });

    it('keeps to the search table as it was when the export began (no --to)', async () => {
      const history = new SearchHistoryRepository(ds);
      const before = await history.auditCount({ accountId: null, since: null, until: new Date() });
      await ds.query(
        `INSERT INTO searches (id, account_id, key_id, kind, input, cost, request_id, created_at)
         VALUES ('srch_future', 'acct_ada', 'key_ada1', 'phone', '{}', 1, 'req_f', now() + interval '1 hour')`,
      );
      try {
        let text = '';
        const out = new Writable({
          write(chunk: Buffer, _enc, done) {
            text += chunk.toString();
            done();
          },
        });
        const err = new Writable({ write: (_c, _e, done) => done() });
        await exportAudit({ history, accounts: new AccountsRepository(ds) }, command({ account: null }), {
          out,
          err,
          now: new Date(),
        });
        expect(text.split('\n').filter(Boolean)).toHaveLength(before);
        expect(text).not.toContain('srch_future');
      } finally {
        await ds.query(`DELETE FROM searches WHERE id = 'srch_future'`);
      }
    });
  });
});
