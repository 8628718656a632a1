import { batchBody, type SearchSnapshot } from './envelopes';

const snapshot = (id: string, status: SearchSnapshot['status'], balance: number): SearchSnapshot => ({
  id,
  status,
  results: status === 'succeeded' ? [{ e164: '+16502530000' }] : null,
  sources: status === 'succeeded' ? [] : null,
  error: status === 'failed' ? { code: 'unavailable', message: 'the lookup failed; nothing was charged' } : null,
  balance,
});

describe('a batch answer', () => {
  it('reports one credits_remaining in every item and the batch: the balance at its last read', () => {
    // An item read settled earlier keeps the balance of that read; later items were read after a release.
    const searches = new Map([
      ['srch_a', snapshot('srch_a', 'succeeded', 0)],
      ['srch_b', snapshot('srch_b', 'succeeded', 3)],
      ['srch_c', snapshot('srch_c', 'failed', 2)],
      ['srch_d', snapshot('srch_d', 'pending', 1)],
    ]);
    const items = [
      { search_id: 'srch_a' },
      { search_id: 'srch_b' },
      { search_id: 'srch_c' },
      { search_id: 'srch_d' },
      { error: { code: 'validation_error', message: 'kind must be one of person, company, email, phone' } },
    ];
    const body = batchBody('bat_x', items, searches, 3);
    expect(body.credits_remaining).toBe(3);
    expect(body.items.map((i) => ('credits_remaining' in i ? i.credits_remaining : 'none'))).toEqual([
      3,
      3,
      3,
      3,
      'none',
    ]);
  });
});
