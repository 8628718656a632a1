import type { DataSource } from 'typeorm';
import { AccountsRepository, openDataSource } from '@dossier/persistence';
import { ledgerState, runCli, sql, testEnv } from '@dossier/testing';

/**
 * `credits:grant` as an operator runs it — and runs it again when the first run timed out: the compiled
 * CLI as a process, on the run's database, one account of its own per test.
 */
describe('CLI credits:grant (real Postgres)', () => {
  let db: DataSource;
  let accounts: AccountsRepository;
  let n = 0;

  const account = async (credits = 10) => {
    const email = `grant-${process.pid}-${++n}-${Date.now()}@example.com`;
    const { id } = await accounts.create(email, 'x', credits);
    return { email, id };
  };
  const grants = (accountId: string) =>
    sql<{ amount: string; reference: string | null }>(
      `SELECT amount, reference FROM credit_ledger WHERE account_id = $1 AND phase = 'grant' ORDER BY id`,
      [accountId],
    );

  beforeAll(async () => {
    db = await openDataSource({ url: testEnv.databaseUrl, poolSize: 1, applicationName: 'credits-grant-spec' });
    accounts = new AccountsRepository(db);
  });
  afterAll(async () => {
    await db?.destroy();
  });

  it('grants again when run again without --reference (as docs/cli.md warns)', async () => {
    const { email, id } = await account();
    expect((await runCli(['credits:grant', email, '5'])).code).toBe(0);
    const again = await runCli(['credits:grant', email, '5']);
    expect([again.code, again.stdout]).toEqual([0, `granted 5 credit(s) to ${email}; balance is now 20\n`]);
    expect(await ledgerState(id)).toMatchObject({ balance: 20, ledger_sum: 20 });
  });

  it('grants once under a --reference: a re-run grants nothing and says so, exit 0', async () => {
    const { email, id } = await account();
    const first = await runCli(['credits:grant', email, '25', '--reference', 'INV-2026-042']);
    expect([first.code, first.stdout]).toEqual([0, `granted 25 credit(s) to ${email}; balance is now 35\n`]);
    const again = await runCli(['credits:grant', email.toUpperCase(), '25', '--reference=INV-2026-042']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(
      new RegExp(
        `^credits:grant: nothing granted: reference "INV-2026-042" granted 25 credit\\(s\\) to ${email} already, ` +
          `at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z; balance is now 35\\n$`,
      ),
    );
    expect(await grants(id)).toEqual([
      { amount: '10', reference: null },
      { amount: '25', reference: 'INV-2026-042' },
    ]);
    expect(await ledgerState(id)).toMatchObject({ balance: 35, ledger_sum: 35 });
  });

  it('grants once when the same reference runs several times at once', async () => {
    const { email, id } = await account();
    const runs = await Promise.all(
      Array.from({ length: 4 }, () => runCli(['credits:grant', email, '7', '--reference', `race-${id}`])),
    );
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0, 0]);
    expect(runs.filter((r) => r.stdout.startsWith('granted 7 credit(s)'))).toHaveLength(1);
    expect(runs.filter((r) => r.stdout.startsWith('credits:grant: nothing granted'))).toHaveLength(3);
    expect(await grants(id)).toEqual([
      { amount: '10', reference: null },
      { amount: '7', reference: `race-${id}` },
    ]);
    expect(await ledgerState(id)).toMatchObject({ balance: 17, ledger_sum: 17 });
  });

  it('refuses a reference used already for another amount or account: exit 1, naming it, nothing granted', async () => {
    const lin = await account();
    const ada = await account();
    expect((await runCli(['credits:grant', lin.email, '25', '--reference', `inv-${lin.id}`])).code).toBe(0);
    for (const [email, credits] of [
      [lin.email, '30'],
      [ada.email, '25'],
    ] as const) {
      const run = await runCli(['credits:grant', email, credits, '--reference', `inv-${lin.id}`]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(
        new RegExp(
          `^credits:grant: nothing granted: reference "inv-${lin.id}" granted 25 credit\\(s\\) to ${lin.email} ` +
            `already, at \\S+; give another reference for another grant\\n$`,
        ),
      );
    }
    expect(await ledgerState(lin.id)).toMatchObject({ balance: 35, ledger_sum: 35 });
    expect(await ledgerState(ada.id)).toMatchObject({ balance: 10, ledger_sum: 10 });
  });

  it('says there is no such account, exit 1, and records no reference', async () => {
    const run = await runCli(['credits:grant', 'nobody-grant@example.com', '5', '--reference', `none-${process.pid}`]);
    expect([run.code, run.stderr]).toEqual([1, 'credits:grant: no account with e-mail nobody-grant@example.com\n']);
    expect(await sql(`SELECT 1 FROM credit_ledger WHERE reference = $1`, [`none-${process.pid}`])).toEqual([]);
  });
});
