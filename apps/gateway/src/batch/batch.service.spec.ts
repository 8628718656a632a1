import { loadGatewayConfig } from '@dossier/config';
import { DomainError } from '@dossier/domain';
import type { BatchesRepository, NewSearch, PlannedItem, SearchesRepository } from '@dossier/persistence';
import { parsePrefer } from '../http/prefer';
import type { LookupCall, LookupsService } from '../lookups/lookups.service';
import type { ResultWaiterService } from '../lookups/result-waiter.service';
import { BatchService } from './batch.service';

/** The last task of this turn of the event loop has run: every promise settled by then has had its turn. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('BatchService: a batch whose queueing failed', () => {
  const call: LookupCall = {
    auth: { keyId: 'key_1', accountId: 'acct_1', mode: 'live' },
    requestId: 'req_1',
    idempotencyKey: null,
    prefer: parsePrefer('respond-async'),
    route: 'POST /v1/batch',
    body: {},
  };

  it('waits for every add to finish before taking the jobs back: an add that lands after another failed is taken back too', async () => {
    const events: string[] = [];
    const inFlight = new Set<string>();
    const landed = new Set<string>();
    let added = 0;
    const lookups = {
      requestHash: () => null,
      checkPurpose: () => {},
      checkSites: () => {},
      assertRoom: () => {},
      costOf: () => 1,
      enqueueJob: async (_req: unknown, searchId: string) => {
        const n = added++;
        inFlight.add(searchId);
        try {
          if (n === 0) throw new Error('connect ECONNREFUSED 127.0.0.1:6379'); // the first add fails at once
          await nextTurn(); // the second is slow, and then reaches Redis
          landed.add(searchId);
          events.push(`landed ${searchId}`);
        } finally {
          inFlight.delete(searchId);
        }
      },
      withdraw: async (_kind: string, searchId: string) => {
        events.push(`withdraw ${searchId}${inFlight.size > 0 ? ' (an add still in flight)' : ''}`);
        return 'removed' as const;
      },
    };
    let reserved: NewSearch[] = [];
    const batches = {
      create: async (_batch: unknown, planned: readonly PlannedItem[]) => {
        reserved = planned.flatMap((p) => ('search' in p ? [p.search] : []));
        return { kind: 'created' as const, items: [], reserved, balance: 8 };
      },
      releaseUnqueued: async (_batchId: string, ids: string[]) => ({
        released: ids.map(() => true),
        voided: true,
      }),
    };
    const service = new BatchService(
      loadGatewayConfig({}),
      lookups as unknown as LookupsService,
      {} as ResultWaiterService,
      batches as unknown as BatchesRepository,
      {} as SearchesRepository,
    );

    const item = { kind: 'email', input: { email: 'someone@example.com' } };
    const refused = await service.submit({ requests: [item, item] }, call).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'unavailable' });

    await nextTurn(); // were the second add still on its way, it lands now
    await nextTurn();
    const [first, second] = reserved.map((s) => s.id);
    expect(landed).toEqual(new Set([second]));
    // The late add landed before anything was taken back, and both jobs were then taken back.
    expect(events).toEqual([`landed ${second}`, `withdraw ${first}`, `withdraw ${second}`]);
  });
});
