import type { HttpContract } from '../http-contract';
import { gleifProvider } from './gleif.provider';

export const contract: HttpContract<'company'> = {
  provider: gleifProvider,
  kind: 'company',
  input: { company_name: 'Acme Widgets Ltd', country: 'gb' },
  settings: (baseUrl) => ({ GLEIF_BASE_URL: baseUrl }),
  checkRequest(req) {
    expect(req).toMatchObject({
      method: 'GET',
      url: '/lei-records?filter%5Bfulltext%5D=Acme+Widgets+Ltd&filter%5Bentity.legalAddress.country%5D=GB&page%5Bsize%5D=20',
    });
  },
  checkFound(items) {
    // The second record's legal name does not match the searched one: GLEIF's full-text hit is dropped.
    expect(items).toEqual([
      {
        id: expect.stringMatching(/^com_/),
        name: 'ACME WIDGETS LIMITED',
        registration_number: '01234567',
        jurisdiction: 'GB',
        country: 'GB',
        domain: null,
        status: 'ACTIVE',
        incorporated_on: '2001-02-03',
        address: '1 High Street, Floor 2, London, GB-LND, EC1A 1AA, GB',
        industry: null,
        match_score: 0.75,
        matched_on: ['company_name', 'country'],
        sources: ['gleif'],
      },
    ]);
  },
};
