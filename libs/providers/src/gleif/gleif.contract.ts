import type { HttpContract } from '../http-contract';
import { gleifProvider } from './gleif.provider';

export const contract: HttpContract<'company'> = {
  provider: gleifProvider,
  kind: 'company',
  input: { company_name: 'BP p.l.c.' },
  settings: (baseUrl) => ({ GLEIF_BASE_URL: baseUrl }),
  checkRequest(req) {
    // By name (legal and other names), ten records, as JSON:API.
    expect(req).toMatchObject({
      method: 'GET',
      url: '/lei-records?filter%5Bentity.names%5D=BP+p.l.c.&page%5Bsize%5D=10',
    });
    expect(req.headers['accept']).toBe('application/vnd.api+json');
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
      address: "1 St James's Square, London, SW1Y 4PD, GB",
      industry: null,
      match_score: 0.75,
      matched_on: ['company_name'],
      sources: ['gleif'],
    });
  },
};
