import type { HttpContract } from '../http-contract';
import { hunterProvider } from './hunter.provider';

export const contract: HttpContract<'email'> = {
  provider: hunterProvider,
  kind: 'email',
  input: { email: ' patrick@Stripe.com ' },
  settings: (baseUrl) => ({ HUNTER_API_KEY: 'contract-key', HUNTER_BASE_URL: baseUrl }),
  // Hunter documents its 403 as its rate limit ("You have reached the rate limit"), not a bot wall.
  outcomes: { '403': 'rate_limited' },
  checkRequest(req) {
    // The trimmed address with its domain lower-cased, and the key as Hunter documents it: in the query.
    expect(req).toMatchObject({
      method: 'GET',
      url: '/v2/email-verifier?email=patrick%40stripe.com&api_key=contract-key',
    });
  },
  checkFound([item]) {
    expect(item).toMatchObject({
      normalized: 'patrick@stripe.com',
      deliverability: 'deliverable',
      reason: 'Hunter: valid (score 100)',
      disposable: false,
      free_provider: false,
      sources: ['hunter'],
    });
  },
};
