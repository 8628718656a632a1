/**
 * The durable floor's money writes (ADR 0076), shared by its front (http-floor-front.ts) and its worker
 * (noop-worker.ts): what any metered lookup must make durable at the least, through the credits module
 * itself — before the job is queued, its reservation (the search row, the debit, the `reserve` entry:
 * `SearchesRepository.reserve`, coalesced as the gateway's are); before the job completes, its settle (the
 * outcome, the `capture` entry: `settleCoalescer()`, as the worker's). Nothing else: no key, no rate limit,
 * no validation, no lookup.
 */
import { openDataSource, queryRows, SearchesRepository } from '@dossier/persistence';

/** The account the durable floor's lookups are charged to: created by the front, enough credit for any run. */
const ACCOUNT_ID = 'acct_benchfloorbenchfloor';
/** A phone lookup's default price (COST_PHONE). */
const COST = 1;
/** The apps' default DB_POOL_SIZE. */
const POOL_SIZE = 10;

export class FloorLedger {
  private readonly settles: ReturnType<SearchesRepository['settleCoalescer']>;

  private constructor(
    private readonly searches: SearchesRepository,
    private readonly closeDb: () => Promise<void>,
  ) {
    this.settles = searches.settleCoalescer();
  }

  /** `front`: creates the floor's account (once per database) before it reserves. */
  static async open(databaseUrl: string, role: 'front' | 'worker'): Promise<FloorLedger> {
    const db = await openDataSource({ url: databaseUrl, poolSize: POOL_SIZE, applicationName: `bench-floor-${role}` });
    if (role === 'front') {
      await queryRows(
        db,
        `INSERT INTO accounts (id, email, email_normalized, password_hash, balance)
         VALUES ($1, 'floor@bench.invalid', 'floor@bench.invalid', 'none', 1000000000000)
         ON CONFLICT (id) DO NOTHING`,
        [ACCOUNT_ID],
      );
    }
    return new FloorLedger(new SearchesRepository(db), () => db.destroy());
  }

  /** Reserves phone lookup `id`; false when the account could not cover it. */
  async reserve(id: string, phone: string): Promise<boolean> {
    const outcome = await this.searches.reserve({
      id,
      accountId: ACCOUNT_ID,
      keyId: 'key_benchfloor',
      kind: 'phone',
      input: { phone },
      cost: COST,
      idempotencyKey: null,
      requestHash: null,
      requestId: `req_${id}`,
      permissiblePurpose: null,
    });
    return outcome.kind === 'reserved';
  }

  /** Settles `id` as found (the reservation captured); the account's balance after it. */
  async settle(id: string): Promise<number | null> {
    const settled = await this.settles.submit({
      searchId: id,
      outcome: { status: 'succeeded', results: [], sources: [], charge: true },
    });
    return settled.balance;
  }

  close(): Promise<void> {
    return this.closeDb();
  }
}
