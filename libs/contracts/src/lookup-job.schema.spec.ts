import { LOOKUP_JOB_VERSION, anyLookupJobSchema, lookupJobSchema } from './lookup-job.schema';

const base = {
  kind: 'phone',
  search_id: 'srch_8cFq3xPzLk2mW9rT4vB7nY1d',
  account_id: 'acct_Kjn65JzDeab8BkbcVCLH',
  request_id: 'req_Qu7JTqgMMZTvik55rFX9',
  submitted_at: '2026-11-22T09:30:00.000Z',
  input: { phone: '+15555550100' },
};
const deadline = '2026-11-22T09:30:10.000Z';

describe('lookup job payloads', () => {
  it('writes v3, with the mode of the key that made the lookup', () => {
    expect(LOOKUP_JOB_VERSION).toBe(3);
    for (const mode of ['live', 'test'] as const) {
      const job = { ...base, v: 3, deadline_at: deadline, mode };
      expect(lookupJobSchema.parse(job)).toEqual(job);
    }
  });

  it('refuses a v3 payload without a mode, or with another one', () => {
    expect(lookupJobSchema.safeParse({ ...base, v: 3, deadline_at: null }).success).toBe(false);
    expect(lookupJobSchema.safeParse({ ...base, v: 3, deadline_at: null, mode: 'sandbox' }).success).toBe(false);
  });

  it('reads the older versions a gateway not yet upgraded writes as live v3 jobs', () => {
    expect(anyLookupJobSchema.parse({ ...base, v: 2, deadline_at: deadline })).toEqual({
      ...base,
      v: 3,
      deadline_at: deadline,
      mode: 'live',
    });
    expect(anyLookupJobSchema.parse({ ...base, v: 1 })).toEqual({ ...base, v: 3, deadline_at: null, mode: 'live' });
  });

  it('never reads an old version as a test job, even if the payload says so', () => {
    expect(anyLookupJobSchema.safeParse({ ...base, v: 2, deadline_at: null, mode: 'test' }).success).toBe(false);
  });
});
