import { COMMAND_NAMES, parseCommand, UsageError, USAGE, usageOf } from './commands';

/** DEFAULT_REGION, which only a command that reads a phone number asks for: none of these does. */
const region = (): string => {
  throw new Error('DEFAULT_REGION was read by a command that reads no phone number');
};

describe('parseCommand', () => {
  it('parses the commands', () => {
    expect(parseCommand([], region)).toEqual({ name: 'help' });
    expect(parseCommand(['db:migrate'], region)).toEqual({ name: 'db:migrate' });
    expect(parseCommand(['credits:grant', 'a@example.com', '25'], region)).toEqual({
      name: 'credits:grant',
      email: 'a@example.com',
      credits: 25,
      reference: null,
    });
    expect(parseCommand(['credits:grant', 'a@example.com', '25', '--reference', 'INV-2026-042'], region)).toEqual({
      name: 'credits:grant',
      email: 'a@example.com',
      credits: 25,
      reference: 'INV-2026-042',
    });
    expect(parseCommand(['credits:grant', '--reference=INV 42', 'a@example.com', '25'], region)).toMatchObject({
      reference: 'INV 42',
    });
  });

  it.each([
    [['credits:grant'], /expected 2 argument/],
    [['credits:grant', 'a@example.com'], /expected 2 argument/],
    [['credits:grant', 'nobody', '5'], /<email> "nobody"/],
    [['credits:grant', 'a@example.com', '0'], /<n> "0"/],
    [['credits:grant', 'a@example.com', '-5'], /<n> "-5"/],
    [['credits:grant', 'a@example.com', '1.5'], /<n> "1.5"/],
    [['credits:grant', 'a@example.com', 'abc'], /<n> "abc"/],
    [['credits:grant', 'a@example.com', '5', '--reference'], /^credits:grant: --reference needs a value/],
    [['credits:grant', 'a@example.com', '5', '--reference', ' '], /^credits:grant: --reference " " must be/],
    [['credits:grant', 'a@example.com', '5', '--reference', 'a\tb'], /^credits:grant: --reference "a\tb" must be/],
    [['credits:grant', 'a@example.com', '5', '--reference', 'x'.repeat(201)], /^credits:grant: --reference .* must be/],
    [['credits:grant', 'a@example.com', '5', '--reference=a', '--reference=b'], /--reference is given twice/],
    [['credits:grant', 'a@example.com', '5', '--ref', 'a'], /^credits:grant: unknown option --ref/],
    [['db:migrate', 'extra'], /expected 0 argument/],
    [['frobnicate'], /unknown command "frobnicate"/],
    // An option given twice: one of the two values would be dropped without a word.
    [['suppress:add', '--email', 'a@example.com', '--email', 'b@example.com'], /^suppress:add: --email is given twice/],
    [
      ['suppress:remove', '--name', 'Jane Doe', '--birth-year', '1980', '--birth-year=1981'],
      /--birth-year is given twice/,
    ],
    [['import', 'person', 'a.csv', '--format', 'csv', '--format=jsonl'], /^import: --format is given twice/],
    [['demo:seed', '--people', '5', '--people', '6'], /^demo:seed: --people is given twice/],
    [
      ['audit:export', '--account', 'a@example.com', '--account', 'b@example.com'],
      /^audit:export: --account is given twice/,
    ],
    [['audit:export', '--from', '2026-01-01', '--from=2026-02-01'], /^audit:export: --from is given twice/],
  ])('%j is a usage error naming the problem', (argv, message) => {
    expect(() => parseCommand(argv, region)).toThrow(UsageError);
    expect(() => parseCommand(argv, region)).toThrow(message);
  });

  it('lists every command once, and help names one', () => {
    expect(COMMAND_NAMES).toEqual([
      'db:migrate',
      'credits:grant',
      'import',
      'demo:seed',
      'watchlists:import',
      'watchlists:list',
      'audit:export',
      'suppress:add',
      'suppress:remove',
      'suppress:list',
      'help',
    ]);
    expect(parseCommand(['help', 'import'], region)).toEqual({ name: 'help', command: 'import' });
    expect(() => parseCommand(['help', 'nope'], region)).toThrow(/^help: expected nothing or one of db:migrate, /);
  });

  it.each([
    [['credits:grant'], 'credits:grant'],
    [['import', 'person'], 'import'],
    [['import', 'people', 'a.csv'], 'import'],
    [['demo:seed', '--people', 'x'], 'demo:seed'],
    [['audit:export', '--format', 'xml'], 'audit:export'],
    [['suppress:add'], 'suppress:add'],
    [['db:migrate', 'extra'], 'db:migrate'],
  ])("%j shows that command's usage, not the whole list", (argv, name) => {
    let message = '';
    try {
      parseCommand(argv, () => 'US');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.endsWith(`\n\n${usageOf(name)}`)).toBe(true);
    expect(usageOf(name)).toMatch(new RegExp(`^usage: npm run cli -- ${name}\\b`));
    for (const other of COMMAND_NAMES.filter((n) => n !== name && !n.startsWith(`${name}`)))
      expect(usageOf(name)).not.toMatch(new RegExp(`^ {2}${other}\\b`, 'm'));
    expect(message.split('\n').length).toBeLessThan(USAGE.split('\n').length / 2);
  });

  it('an unknown command names the commands in one line', () => {
    expect(() => parseCommand(['frobnicate'], region)).toThrow(
      /^unknown command "frobnicate": the commands are db:migrate, credits:grant, .*\(npm run cli -- help describes them\)$/,
    );
  });
});
