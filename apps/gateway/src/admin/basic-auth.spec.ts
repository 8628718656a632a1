import { basicAuthMatches } from './basic-auth';

const admin = { user: 'ops', password: 'pa:ss wörd' };
const basic = (userPass: string) => `Basic ${Buffer.from(userPass, 'utf8').toString('base64')}`;

describe('basicAuthMatches', () => {
  it('accepts the configured user and password (a colon in the password included)', () => {
    expect(basicAuthMatches(basic('ops:pa:ss wörd'), admin)).toBe(true);
    expect(basicAuthMatches(basic('ops:pa:ss wörd').replace('Basic', 'basic'), admin)).toBe(true);
  });

  it.each([
    ['no header', undefined],
    ['another scheme', 'Bearer dsk_abc'],
    ['no colon', basic('opspa:ss wörd').replace(/=+$/, '') + 'x'],
    ['not base64', 'Basic ***'],
    ['a wrong password', basic('ops:pa:ss word')],
    ['a wrong user', basic('root:pa:ss wörd')],
    ['an empty pair', basic(':')],
    ['a prefix of the password', basic('ops:pa:ss')],
  ])('refuses %s', (_label, header) => {
    expect(basicAuthMatches(header, admin)).toBe(false);
  });

  it('refuses everyone when no admin credentials are configured', () => {
    expect(basicAuthMatches(basic('ops:pa:ss wörd'), null)).toBe(false);
    expect(basicAuthMatches(basic(':'), null)).toBe(false);
  });
});
