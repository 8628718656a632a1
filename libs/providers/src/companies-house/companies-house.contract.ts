import { requestLines, type HttpContract } from '../http-contract';
import { companiesHouseProvider } from './companies-house.provider';

const KEY = 'ch-contract-key';

/** Where each field came from: the company's profile (ADR 0068). */
const PROFILE_RECORD = [{ provider: 'companies-house', record_id: '/company/00102498' }];

export const contract: HttpContract<'company'> = {
  provider: companiesHouseProvider,
  kind: 'company',
  input: { company_name: 'BP p.l.c.', country: 'GB' },
  settings: (baseUrl) => ({ COMPANIES_HOUSE_API_KEY: KEY, COMPANIES_HOUSE_BASE_URL: baseUrl }),
  checkRequests(requests) {
    // The search by name, then the best match's officers and persons with significant control (ADR 0066);
    // the key as the Basic auth user name with an empty password on each.
    expect(requestLines(requests)).toEqual([
      'GET /search/companies?q=BP+p.l.c.&items_per_page=10',
      'GET /company/00102498/officers?items_per_page=100',
      'GET /company/00102498/persons-with-significant-control?items_per_page=100',
    ]);
    for (const req of requests)
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
      // The fake answers every path with the search page: not an officer or PSC list, so not known.
      officers: null,
      controllers: null,
      parents: null,
      field_sources: {
        name: PROFILE_RECORD,
        registration_number: PROFILE_RECORD,
        jurisdiction: PROFILE_RECORD,
        country: PROFILE_RECORD,
        status: PROFILE_RECORD,
        incorporated_on: PROFILE_RECORD,
        address: PROFILE_RECORD,
      },
    });
  },
};
