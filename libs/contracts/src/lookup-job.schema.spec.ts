import { LOOKUP_JOB_VERSION, anyLookupJobSchema, lookupJobSchema, replyChannel } from './lookup-job.schema';

const base = {
  kind: 'phone',
  search_id: 'srch_8cFq3xPzLk2mW9rT4vB7nY1d',
  account_id: 'acct_Kjn65JzDeab8BkbcVCLH',
  request_id: 'req_Qu7JTqgMMZTvik55rFX9',
  submitted_at: '2026-11-22T09:30:00.000Z',
  input: { phone: '+15555550100' },
};
const deadline = '2026-11-22T09:30:10.000Z';
const reply = replyChannel('{dossier}', 'gw_abc');

describe('lookup job payloads', () => {
  it('writes v4, with the mode of the key that made the lookup and the gateway channel to reply on', () => {
    expect(LOOKUP_JOB_VERSION).toBe(4);
    expect(reply).toBe('{dossier}:replies:gw_abc');
    for (const mode of ['live', 'test'] as const) {
      for (const reply_to of [reply, null]) {
        const job = { ...base, v: 4, deadline_at: deadline, mode, reply_to };
        expect(lookupJobSchema.parse(job)).toEqual(job);
      }
    }
  });

  it('refuses a v4 payload without a mode or a reply_to, or with another mode', () => {
    expect(lookupJobSchema.safeParse({ ...base, v: 4, deadline_at: null, reply_to: null }).success).toBe(false);
    expect(lookupJobSchema.safeParse({ ...base, v: 4, deadline_at: null, mode: 'live' }).success).toBe(false);
    expect(
      lookupJobSchema.safeParse({ ...base, v: 4, deadline_at: null, mode: 'sandbox', reply_to: null }).success,
    ).toBe(false);
  });

  it('reads the older versions a gateway not yet upgraded writes as v4 jobs with no reply channel', () => {
    expect(anyLookupJobSchema.parse({ ...base, v: 3, deadline_at: deadline, mode: 'test' })).toEqual({
      ...base,
      v: 4,
      deadline_at: deadline,
      mode: 'test',
      reply_to: null,
    });
    expect(anyLookupJobSchema.parse({ ...base, v: 2, deadline_at: deadline })).toEqual({
      ...base,
      v: 4,
      deadline_at: deadline,
      mode: 'live',
      reply_to: null,
    });
    expect(anyLookupJobSchema.parse({ ...base, v: 1 })).toEqual({
      ...base,
      v: 4,
      deadline_at: null,
      mode: 'live',
      reply_to: null,
    });
  });

  it('never reads an old version as a test job, even if the payload says so', () => {
    expect(anyLookupJobSchema.safeParse({ ...base, v: 2, deadline_at: null, mode: 'test' }).success).toBe(false);
  });
});
