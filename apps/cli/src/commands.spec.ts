import { parseCommand, UsageError } from './commands';

describe('parseCommand', () => {
  it('parses the commands', () => {
    expect(parseCommand([])).toEqual({ name: 'help' });
    expect(parseCommand(['db:migrate'])).toEqual({ name: 'db:migrate' });
    expect(parseCommand(['credits:grant', 'a@example.com', '25'])).toEqual({
      name: 'credits:grant',
      email: 'a@example.com',
      credits: 25,
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
    [['db:migrate', 'extra'], /expected 0 argument/],
    [['frobnicate'], /unknown command "frobnicate"/],
  ])('%j is a usage error naming the problem', (argv, message) => {
    expect(() => parseCommand(argv)).toThrow(UsageError);
    expect(() => parseCommand(argv)).toThrow(message);
  });
});
