import type { HttpContract } from '../http-contract';
import { opencorporatesProvider } from './opencorporates.provider';

/** Where each field came from: the company's OpenCorporates page (ADR 0068). */
const OC_RECORD = [{ provider: 'opencorporates', record_id: '/companies/us_de/4785398' }];

export const contract: HttpContract<'company'> = {
  provider: opencorporatesProvider,
  kind: 'company',
  input: { company_name: 'GitHub Inc', country: 'US' },
  settings: (baseUrl) => ({ OPENCORPORATES_API_TOKEN: 'oc-contract-token', OPENCORPORATES_BASE_URL: baseUrl }),
  // OpenCorporates answers an exhausted call allowance with 403 and its error envelope.
  outcomes: { '403': 'rate_limited' },
  checkRequest(req) {
    // The token in the query, as OpenCorporates documents it; the country as its lower-case code.
    expect(req).toMatchObject({
      method: 'GET',
      url: '/companies/search?q=GitHub+Inc&per_page=10&country_code=us&api_token=oc-contract-token',
    });
  },
  checkFound(items) {
    expect(items.map((i) => [i.name, i.jurisdiction])).toEqual([
      ['GITHUB, INC.', 'US-DE'],
      ['GITHUB, INC.', 'US-CA'],
    ]);
    expect(items[0]).toEqual({
      id: expect.stringMatching(/^com_/),
      name: 'GITHUB, INC.',
      registration_number: '4785398',
      jurisdiction: 'US-DE',
      country: 'US',
      domain: null,
      status: 'active',
      incorporated_on: '2007-10-26',
      address: '251 Little Falls Drive, Wilmington, DE, 19808',
      industry: null,
      match_score: 0.75,
      matched_on: ['company_name', 'country'],
      sources: ['opencorporates'],
      // Not read from OpenCorporates (ADR 0066).
      officers: null,
      controllers: null,
      parents: null,
      field_sources: {
        name: OC_RECORD,
        registration_number: OC_RECORD,
        jurisdiction: OC_RECORD,
        country: OC_RECORD,
        status: OC_RECORD,
        incorporated_on: OC_RECORD,
        address: OC_RECORD,
      },
    });
  },
};
