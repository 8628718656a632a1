import { Client } from 'pg';
import { ownDatabase, runCli } from '@dossier/testing';

/**
 * `suppress:add`, `suppress:remove` and `suppress:list` as an operator runs them: the compiled CLI as a
 * process, on a database of its own so the list holds only what this file adds.
 */
describe('CLI suppress:* (real Postgres)', () => {
  // Filled in by beforeAll with the file's own database (ownDatabase).
  const env = { DATABASE_URL: '' };
  let database: Awaited<ReturnType<typeof ownDatabase>> | undefined;
  let db: Client;

  const cli = (...args: string[]) => runCli(args, env);
  const rows = async () =>
    (await db.query(`SELECT id, kind, key_hash, hint FROM suppressions ORDER BY created_at, id`)).rows as {
      id: string;
      kind: string;
      key_hash: string;
      hint: string;
    }[];

  beforeAll(async () => {
    database = await ownDatabase('suppress');
    env.DATABASE_URL = database.url;
    db = new Client({ connectionString: env.DATABASE_URL });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await database?.drop();
  });

  it('lists an empty list', async () => {
    const run = await cli('suppress:list');
    expect(run).toMatchObject({ code: 0, stdout: 'suppress:list: the list is empty\n' });
  });

  it('adds each kind of subject once, however it is written, storing no readable value', async () => {
    const email = await cli('suppress:add', '--email', ' Jane.Doe@Example.COM ');
    expect(email.code).toBe(0);
    expect(email.stdout).toMatch(/^suppress:add: added sup_\w{20} {2}email {2}j…@example\.com {2}\S+Z\n$/);
    const again = await cli('suppress:add', '--email=jane.doe@example.com');
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^suppress:add: listed already: sup_\w{20} {2}email {2}j…@example\.com/);
    expect(again.stdout).toContain(email.stdout.split(' ')[2]!); // the same entry

    expect((await cli('suppress:add', '--phone', '+44 20 7946 0958')).stdout).toMatch(/added .* phone {2}\+44…58 /);
    // A national number is read in DEFAULT_REGION: in GB, this one is the number just added.
    const national = await runCli(['suppress:add', '--phone', '020 7946 0958'], { ...env, DEFAULT_REGION: 'GB' });
    expect([national.code, national.stdout]).toEqual([
      0,
      expect.stringMatching(/listed already: .* phone {2}\+44…58 /),
    ]);
    expect((await cli('suppress:add', '--name', 'Jane Q. Doe', '--birth-year', '1980')).stdout).toMatch(
      /added .* name {2}J… Q… D…, 1980 /,
    );

    const stored = await rows();
    expect(stored.map((r) => [r.kind, r.hint])).toEqual([
      ['email', 'j…@example.com'],
      ['phone', '+44…58'],
      ['name', 'J… Q… D…, 1980'],
    ]);
    for (const r of stored) expect(r.key_hash).toMatch(/^[0-9a-f]{64}$/);
    const dump = JSON.stringify(stored).toLowerCase();
    for (const secret of ['jane.doe', '79460958', 'jane q']) expect(dump).not.toContain(secret);

    const list = await cli('suppress:list');
    expect(list.code).toBe(0);
    expect(list.stdout.trim().split('\n')).toEqual(
      stored.map((r) =>
        expect.stringMatching(new RegExp(`^${r.id} {2}${r.kind} {2}.+ {2}\\d{4}-\\d\\d-\\d\\dT\\S+Z$`)),
      ),
    );
  });

  it('removes a listed subject by its value, and says so (exit 1) when it is not listed', async () => {
    const removed = await cli('suppress:remove', '--name', 'JANE Q DOE', '--birth-year', '1980');
    expect(removed.code).toBe(0);
    expect(removed.stdout).toMatch(/^suppress:remove: removed sup_\w{20} {2}name {2}J… Q… D…, 1980 /);
    expect((await rows()).map((r) => r.kind)).toEqual(['email', 'phone']);

    const absent = await cli('suppress:remove', '--name', 'Jane Q. Doe', '--birth-year', '1980');
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain('suppress:remove: name J… Q… D…, 1980 is not on the list');
    expect((await rows()).map((r) => r.kind)).toEqual(['email', 'phone']);
  });

  it.each([
    [['suppress:add'], 'give exactly one of --email, --phone, or --name with --birth-year'],
    [['suppress:add', '--email', 'a@example.com', '--phone', '+442079460958'], 'give exactly one of'],
    [['suppress:add', '--email', 'not-an-address'], '--email must be an e-mail address'],
    [
      ['suppress:add', '--phone', '020 7946 0958'],
      "--phone is not a phone number in US (read in the operator's default region)",
    ],
    [['suppress:add', '--name', 'Jane Doe'], '--birth-year is required with name'],
    [['suppress:add', '--name', 'Jane Doe', '--birth-year', '80'], '--birth-year must be a whole year from 1800'],
    [['suppress:add', '--name', ' .-. ', '--birth-year', '1980'], '--name must be a name with letters'],
    [['suppress:add', '--email', 'a@example.com', '--birth-year', '1980'], '--birth-year goes with name only'],
    [['suppress:remove', '--email', 'a@example.com', 'extra'], 'suppress:remove: unexpected argument "extra"'],
    [['suppress:add', '--nickname', 'x'], '--nickname'],
    [['suppress:list', 'all'], 'suppress:list'],
  ])('refuses %j naming the field, exit 2, nothing written', async (args, message) => {
    const before = await rows();
    const run = await cli(...args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(await rows()).toEqual(before);
  });
});
