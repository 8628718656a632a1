import type { HttpContract } from '../http-contract';
import { gravatarProvider } from './gravatar.provider';

export const contract: HttpContract<'email'> = {
  provider: gravatarProvider,
  kind: 'email',
  input: { email: ' Grace.Hopper@Example.com' },
  settings: (baseUrl) => ({ GRAVATAR_BASE_URL: baseUrl }),
  checkRequest(req) {
    // The SHA-256 of the trimmed, lower-cased address.
    expect(req).toMatchObject({
      method: 'GET',
      url: '/v3/profiles/a460d7fa831915bb17b55b9151a5278e916f2de6480dc2171845c4b305620428',
    });
    expect(req.headers['authorization']).toBeUndefined();
  },
  checkFound([item]) {
    expect(item!.accounts).toEqual([
      { service: 'gravatar', username: 'gracehopper', url: 'https://gravatar.com/gracehopper' },
      { service: 'github', username: 'ghopper', url: 'https://github.com/ghopper' },
      { service: 'tumblr', username: 'amazinggrace', url: 'https://amazinggrace.tumblr.com' },
    ]);
    expect(item!.deliverability).toBe('unknown');
  },
};
