import type { HttpContract } from '../http-contract';
import { twilioProvider } from './twilio.provider';

export const contract: HttpContract<'phone'> = {
  provider: twilioProvider,
  kind: 'phone',
  // National format with a country: Twilio is asked for the E.164 form.
  input: { phone: '(415) 555-2671', country: 'US' },
  settings: (baseUrl) => ({
    TWILIO_ACCOUNT_SID: 'AC00000000000000000000000000000001',
    TWILIO_AUTH_TOKEN: 'contract-token',
    TWILIO_BASE_URL: baseUrl,
  }),
  checkRequest(req) {
    expect(req).toMatchObject({ method: 'GET', url: '/v2/PhoneNumbers/+14155552671?Fields=line_type_intelligence' });
    expect(req.headers['authorization']).toBe(
      `Basic ${Buffer.from('AC00000000000000000000000000000001:contract-token').toString('base64')}`,
    );
  },
  checkFound([item]) {
    expect(item).toEqual({
      input: '(415) 555-2671',
      e164: '+14155552671',
      valid: true,
      validation_errors: [],
      possible: true,
      country_code: '1',
      region: 'US',
      location: null,
      carrier: 'T-Mobile USA, Inc.',
      line_type: 'mobile',
      time_zones: [],
      national_format: '(415) 555-2671',
      international_format: '',
      sources: ['twilio'],
    });
  },
};
