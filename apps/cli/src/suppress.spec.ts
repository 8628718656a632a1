import { parseCommand, UsageError } from './commands';

describe('suppress:* arguments', () => {
  it('reads the subject from the options', () => {
    expect(parseCommand(['suppress:add', '--email', 'Jane@Example.com'])).toEqual({
      name: 'suppress:add',
      subject: { kind: 'email', key: 'email:jane@example.com', hint: 'j…@example.com' },
    });
    expect(parseCommand(['suppress:remove', '--name=Jane Doe', '--birth-year', '1980'])).toEqual({
      name: 'suppress:remove',
      subject: { kind: 'name', key: 'name:jane doe:1980', hint: 'J… D…, 1980' },
    });
    expect(parseCommand(['suppress:list'])).toEqual({ name: 'suppress:list' });
  });

  it.each([
    [['suppress:add'], /^suppress:add: give exactly one of --email, --phone, or --name with --birth-year/],
    [['suppress:add', '--email', 'a@b.example', '--phone', '+14155550100'], /give exactly one of/],
    [['suppress:add', '--email', 'nope'], /^suppress:add: --email must be an e-mail address/],
    [['suppress:add', '--phone', '12'], /^suppress:add: --phone must be a phone number in international format/],
    [['suppress:remove', '--name', 'Jane Doe'], /^suppress:remove: --birth-year is required with name/],
    [
      ['suppress:add', '--name', 'Jane Doe', '--birth-year', '19x0'],
      /^suppress:add: --birth-year must be a whole year from 1800 to \d{4}/,
    ],
    [['suppress:add', '--email'], /--email needs a value/],
    [['suppress:add', '--mail', 'a@b.example'], /unknown option --mail/],
    [['suppress:add', 'a@b.example'], /unexpected argument "a@b.example"/],
    [['suppress:list', '--all'], /expected 0 argument/],
  ])('%j is a usage error naming the option', (argv, message) => {
    expect(() => parseCommand(argv)).toThrow(UsageError);
    expect(() => parseCommand(argv)).toThrow(message);
  });
});
