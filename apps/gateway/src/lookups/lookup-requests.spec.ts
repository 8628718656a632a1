import { DomainError } from '@dossier/domain';
import { personLookup, phoneLookup, searchLookup } from './lookup-requests';

/** The `details` of the validation error `parse` throws. */
function detailsOf(parse: () => unknown): unknown {
  try {
    parse();
  } catch (err) {
    if (err instanceof DomainError) return err.details;
    throw err;
  }
  throw new Error('expected a validation error');
}

describe('a national phone number without its country', () => {
  it('is told to give a country where the request takes one (verify/phone, search type phone)', () => {
    expect(detailsOf(() => phoneLookup({ phone: '020 7946 0018' }))).toEqual([
      { field: 'phone', issue: 'needs a leading + and country code, or a country' },
    ]);
    expect(detailsOf(() => searchLookup({ type: 'phone', query: '020 7946 0018' }))).toEqual([
      { field: 'query', issue: 'needs a leading + and country code, or a country' },
    ]);
  });

  it('is never told to give a country where the body has no country field (a person search)', () => {
    expect(detailsOf(() => personLookup({ phone: '020 7946 0018' }))).toEqual([
      { field: 'phone', issue: 'needs a leading + and country code, such as +44 20 7946 0018' },
    ]);
    // The field the message would send the client to is refused there.
    expect(detailsOf(() => personLookup({ phone: '+44 20 7946 0018', country: 'GB' }))).toEqual([
      { field: 'country', issue: 'is not a known field' },
    ]);
  });
});
