import { batchBody, searchEnvelope, type SearchSnapshot } from './envelopes';
import { sourceSummary } from './lookup-result.schema';

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

describe('a search envelope (ADR 0049)', () => {
  const sources = [
    { provider: 'site:GitHub', outcome: 'found' as const, took_ms: 120 },
    { provider: 'site:Steam', outcome: 'not_found' as const, took_ms: 300 },
    {
      provider: 'site:Slow',
      outcome: 'timeout' as const,
      took_ms: 9000,
      detail: 'site:Slow: no answer before the deadline',
    },
    { provider: 'site:Gone', outcome: 'not_found' as const, took_ms: 200 },
  ];

  it('counts its sources by outcome, every outcome named', () => {
    const body = searchEnvelope({ ...snapshot('srch_a', 'succeeded', 5), sources });
    expect(body).toMatchObject({
      status: 'success',
      sources,
      source_summary: {
        found: 1,
        not_found: 2,
        unknown: 0,
        rate_limited: 0,
        blocked: 0,
        timeout: 1,
        error: 0,
        skipped: 0,
      },
    });
  });

  it('shows what a pending search found so far, and nothing when the worker has written nothing', () => {
    const progress = {
      results: [],
      source_summary: sourceSummary(sources.slice(0, 2)),
      sources_pending: 2,
      updated_at: '2026-12-06T23:00:00.000Z',
    };
    expect(searchEnvelope({ ...snapshot('srch_a', 'pending', 5), progress })).toEqual({
      status: 'pending',
      search_id: 'srch_a',
      credits_remaining: 5,
      progress,
    });
    expect(searchEnvelope(snapshot('srch_a', 'pending', 5))).toEqual({
      status: 'pending',
      search_id: 'srch_a',
      credits_remaining: 5,
    });
  });
});
