import { requestLines, type HttpContract } from '../http-contract';
import { gleifProvider } from './gleif.provider';

/** Where each field came from: the LEI record (ADR 0068). */
const LEI_RECORD = [{ provider: 'gleif', record_id: '/lei-records/213800LBDB8WB3QGVN21' }];

export const contract: HttpContract<'company'> = {
  provider: gleifProvider,
  kind: 'company',
  input: { company_name: 'BP p.l.c.' },
  settings: (baseUrl) => ({ GLEIF_BASE_URL: baseUrl }),
  checkRequests(requests) {
    // By name (legal and other names), ten records, as JSON:API; then the best match's parents (ADR 0066).
    expect(requestLines(requests)).toEqual([
      'GET /lei-records?filter%5Bentity.names%5D=BP+p.l.c.&page%5Bsize%5D=10',
      'GET /lei-records/213800LBDB8WB3QGVN21/direct-parent',
      'GET /lei-records/213800LBDB8WB3QGVN21/ultimate-parent',
    ]);
    for (const req of requests) expect(req.headers['accept']).toBe('application/vnd.api+json');
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
      // The fake answers every path with the search page: not a parent's record, so not known.
      officers: null,
      controllers: null,
      parents: null,
      field_sources: {
        name: LEI_RECORD,
        registration_number: LEI_RECORD,
        jurisdiction: LEI_RECORD,
        country: LEI_RECORD,
        status: LEI_RECORD,
        incorporated_on: LEI_RECORD,
        address: LEI_RECORD,
      },
    });
  },
};
