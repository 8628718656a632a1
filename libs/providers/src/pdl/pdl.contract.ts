import type { HttpContract } from '../http-contract';
import { pdlProvider } from './pdl.provider';

export const contract: HttpContract<'person'> = {
  provider: pdlProvider,
  kind: 'person',
  input: { name: 'Sean Thorne', email: ' Sean@PeopleDataLabs.com ' },
  settings: (baseUrl) => ({ PDL_API_KEY: 'pdl-contract-key', PDL_BASE_URL: baseUrl }),
  // PDL's 403 names a key that may not use the API (its error envelope): a refused request, not a wall.
  outcomes: { '403': 'error' },
  checkRequest(req) {
    // The e-mail as compared, the name with it, the likelihood floor, and the key in its header.
    expect(req).toMatchObject({
      method: 'GET',
      url:
        '/v5/person/enrich?email=sean%40peopledatalabs.com&name=Sean+Thorne&min_likelihood=6' +
        '&include_if_matched=true&titlecase=true',
    });
    expect(req.headers['x-api-key']).toBe('pdl-contract-key');
  },
  checkFound([item]) {
    expect(item).toEqual({
      id: expect.stringMatching(/^per_/),
      full_name: 'Sean Thorne',
      first_name: 'Sean',
      last_name: 'Thorne',
      aliases: [],
      emails: ['sean@peopledatalabs.com', 'sthorne@example.org'],
      phones: ['+14155688415'],
      usernames: ['seanthorne', 'deseanthorne', 'seanthorne5'],
      accounts: [
        { service: 'linkedin', username: 'seanthorne', url: 'https://linkedin.com/in/seanthorne' },
        { service: 'facebook', username: 'deseanthorne', url: 'https://facebook.com/deseanthorne' },
        { service: 'twitter', username: 'seanthorne5', url: 'https://twitter.com/seanthorne5' },
        { service: 'angellist', username: null, url: 'https://angel.co/300' },
      ],
      locations: [{ city: 'San Francisco', region: 'California', country: 'US' }],
      age: new Date().getUTCFullYear() - 1990, // this year minus the birth year, as the local index says it
      birth_year: 1990,
      match_score: 0.9,
      matched_on: ['email', 'name'],
      sources: ['pdl'],
    });
  },
};
