import { loadGatewayConfig } from '@dossier/config';
import type { LookupQueues } from '@dossier/contracts';
import { DomainError } from '@dossier/domain';
import type { NewSearch, SearchesRepository } from '@dossier/persistence';
import { newSearch } from '@dossier/testing';
import { parsePrefer } from '../http/prefer';
import type { QueuePressureService } from './queue-pressure.service';
import type { ResultWaiterService } from './result-waiter.service';
import { SubmissionService, type LookupCall, type Reserved } from './submission.service';
import type { UsernameSitesService } from './username-sites.service';

/** The last task of this turn of the event loop has run: every promise settled by then has had its turn. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SubmissionService: searches whose queueing failed', () => {
  const call: LookupCall = {
    auth: { keyId: 'key_1', accountId: 'acct_1', mode: 'live' },
    requestId: 'req_1',
    idempotencyKey: null,
    prefer: parsePrefer('respond-async'),
    route: 'POST /v1/batch',
    body: {},
  };
  const request = { kind: 'email', input: { email: 'someone@example.com' }, purpose: null } as const;

  /** A submission whose adds and take-backs are these, and whose releases are recorded. */
  function submissionWith(
    enqueueJob: (r: Reserved) => Promise<void>,
    withdraw: (s: NewSearch) => Promise<'removed' | 'running' | 'unreachable'>,
  ) {
    const releases: { ids: readonly string[]; whole: boolean; batchId: string | null }[] = [];
    const searches = {
      releaseUnqueued: async (ids: readonly string[], _error: unknown, whole: boolean, batchId: string | null) => {
        releases.push({ ids, whole, batchId });
        return { voided: whole };
      },
    };
    const submission = new SubmissionService(
      loadGatewayConfig({}),
      {} as LookupQueues,
      searches as unknown as SearchesRepository,
      {} as ResultWaiterService,
      {} as QueuePressureService,
      {} as UsernameSitesService,
    );
    Object.assign(submission, { enqueueJob, withdraw });
    return { submission, releases };
  }

  it('waits for every add to finish before taking the jobs back: an add that lands after another failed is taken back too', async () => {
    const events: string[] = [];
    const inFlight = new Set<string>();
    const landed = new Set<string>();
    let added = 0;
    const { submission, releases } = submissionWith(
      async ({ search }) => {
        const n = added++;
        inFlight.add(search.id);
        try {
          if (n === 0) throw new Error('connect ECONNREFUSED 127.0.0.1:6379'); // the first add fails at once
          await nextTurn(); // the second is slow, and then reaches Redis
          landed.add(search.id);
          events.push(`landed ${search.id}`);
        } finally {
          inFlight.delete(search.id);
        }
      },
      async (search) => {
        events.push(`withdraw ${search.id}${inFlight.size > 0 ? ' (an add still in flight)' : ''}`);
        return 'removed';
      },
    );
    const reserved = [newSearch('acct_1'), newSearch('acct_1')].map((search) => ({ search, request }));
    const refused = await submission.enqueue(reserved, call, 'batch_1').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'unavailable' });

    await nextTurn(); // were the second add still on its way, it lands now
    await nextTurn();
    const [first, second] = reserved.map((r) => r.search.id);
    expect(landed).toEqual(new Set([second]));
    // The late add landed before anything was taken back, and both jobs were then taken back.
    expect(events).toEqual([`landed ${second}`, `withdraw ${first}`, `withdraw ${second}`]);
    expect(releases).toEqual([{ ids: [first, second], whole: true, batchId: 'batch_1' }]);
  });

  it('leaves a search whose job a worker runs to that job, releases the others, and lets the submission stand', async () => {
    const [running, idle] = [newSearch('acct_1'), newSearch('acct_1')];
    const { submission, releases } = submissionWith(
      async () => {
        throw new Error('Command timed out');
      },
      async (search) => (search.id === running.id ? 'running' : 'removed'),
    );
    const outcome = await submission.enqueue(
      [running, idle].map((search) => ({ search, request })),
      call,
      null,
    );
    expect(outcome).toBe('stands');
    expect(releases).toEqual([{ ids: [idle.id], whole: false, batchId: null }]);
  });
});
