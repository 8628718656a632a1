import { parseCommand, UsageError } from './commands';

/** DEFAULT_REGION: where a national --phone is read. */
const region = () => 'US';

describe('suppress:* arguments', () => {
  it('reads the subject from the options', () => {
    expect(parseCommand(['suppress:add', '--email', 'Jane@Example.com'], region)).toEqual({
      name: 'suppress:add',
      subject: { kind: 'email', key: 'email:jane@example.com', hint: 'j…@example.com' },
    });
    expect(parseCommand(['suppress:remove', '--name=Jane Doe', '--birth-year', '1980'], region)).toEqual({
      name: 'suppress:remove',
      subject: { kind: 'name', key: 'name:jane doe:1980', hint: 'J… D…, 1980' },
    });
    expect(parseCommand(['suppress:list'], region)).toEqual({ name: 'suppress:list' });
  });

  it('reads a national --phone in DEFAULT_REGION, an international one as written', () => {
    expect(parseCommand(['suppress:add', '--phone', '(512) 555-0199'], region)).toEqual({
      name: 'suppress:add',
      subject: { kind: 'phone', key: 'phone:+15125550199', hint: '+15…99' },
    });
    expect(parseCommand(['suppress:remove', '--phone=020 7946 0958'], () => 'GB')).toMatchObject({
      subject: { key: 'phone:+442079460958' },
    });
    expect(parseCommand(['suppress:add', '--phone', '+44 20 7946 0958'], region)).toMatchObject({
      subject: { key: 'phone:+442079460958' },
    });
  });

  it.each([
    [['suppress:add'], /^suppress:add: give exactly one of --email, --phone, or --name with --birth-year/],
    [['suppress:add', '--email', 'a@b.example', '--phone', '+14155550100'], /give exactly one of/],
    [['suppress:add', '--email', 'nope'], /^suppress:add: --email must be an e-mail address/],
    [
      ['suppress:add', '--phone', '12'],
      /^suppress:add: --phone is not a phone number in US \(read in the operator's default region\)/,
    ],
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
    expect(() => parseCommand(argv, region)).toThrow(UsageError);
    expect(() => parseCommand(argv, region)).toThrow(message);
  });
});
