import type { HttpContract } from '../http-contract';
import { companiesHouseProvider } from './companies-house.provider';

const KEY = 'ch-contract-key';

export const contract: HttpContract<'company'> = {
  provider: companiesHouseProvider,
  kind: 'company',
  input: { company_name: 'BP p.l.c.', country: 'GB' },
  settings: (baseUrl) => ({ COMPANIES_HOUSE_API_KEY: KEY, COMPANIES_HOUSE_BASE_URL: baseUrl }),
  checkRequest(req) {
    // The search by name; the key as the Basic auth user name with an empty password.
    expect(req).toMatchObject({ method: 'GET', url: '/search/companies?q=BP+p.l.c.&items_per_page=10' });
    expect(req.headers['authorization']).toBe(`Basic ${Buffer.from(`${KEY}:`).toString('base64')}`);
  },
  checkFound(items) {
    expect(items.map((i) => i.name)).toEqual(['BP P.L.C.', 'BP INTERNATIONAL LIMITED']);
    expect(items[0]).toEqual({
      id: expect.stringMatching(/^com_/),
      name: 'BP P.L.C.',
      registration_number: '00102498',
      jurisdiction: 'GB',
      country: 'GB',
      domain: null,
      status: 'active',
      incorporated_on: '1909-04-14',
      address: "1 St James's Square, London, SW1Y 4PD",
      industry: null,
      match_score: 0.75,
      matched_on: ['company_name', 'country'],
      sources: ['companies-house'],
    });
  },
};
