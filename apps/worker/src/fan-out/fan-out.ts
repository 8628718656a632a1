import type { LocalIndex, LookupKind, WatchlistIndex } from '@dossier/domain';
import {
  PERSON_LIMIT_DEFAULT,
  PROVIDER_ITEM_SCHEMAS,
  type LookupInputByKind,
  type ProviderItemByKind,
  type ResultItemByKind,
  type SourceReport,
} from '@dossier/contracts';
import {
  ProviderError,
  mergeItems,
  personCandidates,
  rateLimitOf,
  reportOfFailure,
  sharedIdentifiers,
  shortDetail,
  type Contribution,
  type Provider,
  type ProviderContext,
  type ProviderProgress,
} from '@dossier/providers';
import type { ProviderMetrics } from './provider-metrics';
import type { UpstreamGuards } from './upstream-guards';

export interface FanOutResult<K extends LookupKind> {
  /** Merged items (one for phone and e-mail), best first. */
  items: ResultItemByKind[K][];
  /** One report per provider tried (per site for username presence). */
  sources: SourceReport[];
  /**
   * Whether the lookup is charged: it has results and at least one source found something. Nothing
   * found, or nothing known (every source `unknown`, failed or skipped), costs nothing.
   */
  charge: boolean;
  /** A person search: how many items passed its `min_score` before its `limit` cut them (narrowed). */
  total?: number;
}

/** Whether a lookup with these items and reports is charged (see FanOutResult.charge). */
export function chargeable(items: readonly unknown[], sources: readonly SourceReport[]): boolean {
  return items.length > 0 && sources.some((s) => s.outcome === 'found');
}

/**
 * A lookup's outcome from the items it answers and its providers' reports. Left without items (what a
 * provider found was merged away, e.g. a profile with no name, or suppressed), no report says `found`:
 * the answer says `not_found` where it holds nothing, and is free.
 */
export function outcomeOf<K extends LookupKind>(
  items: ResultItemByKind[K][],
  sources: readonly SourceReport[],
): FanOutResult<K> {
  const reports =
    items.length > 0
      ? [...sources]
      : sources.map((s) => (s.outcome === 'found' ? { ...s, outcome: 'not_found' as const } : s));
  return { items, sources: reports, charge: chargeable(items, reports) };
}

/**
 * A person search's answer as it asked for it (ADR 0047): items scoring below its `min_score` left out, the
 * rest counted (`total`), its best `limit` kept (PERSON_LIMIT_DEFAULT when it names none). Run after
 * suppression, so nothing suppressed is counted; a search left without items is free (outcomeOf). Other
 * kinds as they are.
 */
export function narrowed<K extends LookupKind>(
  kind: K,
  input: LookupInputByKind[K],
  outcome: FanOutResult<K>,
): FanOutResult<K> {
  if (kind !== 'person') return outcome;
  const { limit = PERSON_LIMIT_DEFAULT, min_score: minScore = 0 } = input as LookupInputByKind['person'];
  const passed = (outcome.items as ResultItemByKind['person'][]).filter((i) => i.match_score >= minScore);
  return { ...outcomeOf(passed.slice(0, limit) as ResultItemByKind[K][], outcome.sources), total: passed.length };
}

/**
 * Where a lookup's progress goes while it runs (ADR 0049): what its providers know so far, merged as its answer
 * will be, written at most every `everyMs` — only for a lookup one of whose providers reports progress (username
 * presence), once something changed since the last write.
 */
export interface FanOutProgress<K extends LookupKind> {
  everyMs: number;
  /** `pending`: the sources that have still to answer. A failure is its own: the lookup goes on. */
  publish(partial: FanOutResult<K> & { pending: number }): Promise<void>;
}

/** One provider's part of a lookup: its items (and their identities) and its reports. */
interface Run<K extends LookupKind> {
  precedence: number;
  items: ProviderItemByKind[K][];
  identities?: string[][];
  reports: SourceReport[];
}

export interface FanOutOptions {
  /** The local index, for the providers that search it. */
  localIndex?: LocalIndex;
  /** The imported sanctions lists, for the providers that screen names against them (ADR 0064). */
  watchlists?: WatchlistIndex;
  /**
   * Told of each failure that is not a ProviderError — a provider's bug, an answer off the result contract:
   * the answer says only that the provider "failed unexpectedly", so the operator's log needs the error.
   */
  unexpected?: (provider: string, error: unknown) => void;
}

/** A call's shortest sensible budget: a deadline already (nearly) past still lets a provider try. */
const MIN_CALL_MS = 250;

/**
 * Runs every provider of a kind in parallel, each through the upstream guards with its own deadline:
 * the request's remaining wait (from the job's `deadline_at`), never longer than the provider's own
 * timeout — or only its own timeout for a provider whose check goes on after the caller got its 202,
 * and for every provider of a job taken after its deadline had passed.
 * allSettled semantics: one failing or slow upstream never sinks the lookup, and each outcome is
 * reported in `sources`, with a `detail` when it is neither `found` nor `not_found`.
 */
export class FanOut {
  constructor(
    private readonly guards: UpstreamGuards,
    private readonly metrics: ProviderMetrics,
    private readonly settings: Readonly<Record<string, string | undefined>>,
    private readonly options: FanOutOptions = {},
  ) {}

  async run<K extends LookupKind>(
    kind: K,
    input: LookupInputByKind[K],
    providers: readonly Provider<K>[],
    deadlineAt: number | null,
    { live = true, progress }: { live?: boolean; progress?: FanOutProgress<K> } = {},
  ): Promise<FanOutResult<K>> {
    // A job taken after its deadline (it waited in a backlog, or for a worker to start) has a caller that
    // already got its 202 and will poll: its providers get their own timeouts, as an asynchronous
    // lookup's do. Cut to the 250 ms floor, every slower source would answer `timeout`, and the lookup
    // would come back empty (and free) for nothing but the queue's length.
    const deadline = deadlineAt !== null && deadlineAt > Date.now() ? deadlineAt : null;
    const tracker = progress
      ? new ProgressTracker<K>(providers.length, progress.everyMs, async (runs, pending) => {
          const partial = await this.merged(kind, runs, live);
          await progress.publish({ ...partial, pending });
        })
      : null;
    const called = await Promise.all(
      providers.map((p, i) =>
        this.call(kind, input, p, deadline, tracker?.reporter(i, p.precedence ?? 0)).then((run) => {
          tracker?.finished(i, run);
          return run;
        }),
      ),
    );
    await tracker?.stop();
    const runs = called.filter((r) => r !== null);
    for (const report of runs.flatMap((r) => r.reports)) this.metrics.observe(report);
    return this.merged(kind, runs, live);
  }

  /** The lookup's outcome from its providers' parts: their items merged, their reports in provider order. */
  private async merged<K extends LookupKind>(
    kind: K,
    runs: readonly Run<K>[],
    live: boolean,
  ): Promise<FanOutResult<K>> {
    const sources = runs.flatMap((r) => r.reports);
    const contributions: Contribution<K>[] = runs.map((r) => ({
      precedence: r.precedence,
      items: r.items,
      ...(r.identities ? { identities: r.identities } : {}),
    }));
    // Whether an identifier two people records share is a household line or a switchboard, the operator's
    // index tells (a test key's lookups never read it).
    const index = live ? this.options.localIndex : undefined;
    const shared =
      kind === 'person' && index
        ? await sharedIdentifiers(personCandidates(contributions as Contribution<'person'>[]), index)
        : undefined;
    const items = mergeItems(kind, contributions, shared);
    return outcomeOf(items, sources);
  }

  /**
   * One provider's call, or null when it does not apply to the input. Whatever it throws — from
   * `appliesTo` and `isConfigured` too — or an answer whose items are off the result contract is its own
   * `error`: the other providers' results stand (and the job is not failed and retried, calling every
   * billed upstream again).
   */
  private async call<K extends LookupKind>(
    kind: K,
    input: LookupInputByKind[K],
    provider: Provider<K>,
    deadlineAt: number | null,
    progress?: ProviderContext['progress'],
  ): Promise<Run<K> | null> {
    const precedence = provider.precedence ?? 0;
    const started = Date.now();
    try {
      if (!(provider.appliesTo?.(input) ?? true)) return null;
      const configured = provider.isConfigured(this.settings);
      if (configured !== true) {
        return {
          precedence,
          items: [],
          reports: [{ provider: provider.id, outcome: 'skipped', took_ms: 0, detail: configured }],
        };
      }
      return await this.answer(kind, input, provider, deadlineAt, started, progress);
    } catch (error) {
      const report = reportOfFailure(provider.id, error, Date.now() - started);
      if (report.outcome === 'error' && !(error instanceof ProviderError))
        this.options.unexpected?.(provider.id, error);
      return { precedence, items: [], reports: [report] };
    }
  }

  private async answer<K extends LookupKind>(
    kind: K,
    input: LookupInputByKind[K],
    provider: Provider<K>,
    deadlineAt: number | null,
    started: number,
    progress?: ProviderContext['progress'],
  ): Promise<Run<K>> {
    const precedence = provider.precedence ?? 0;
    const own = started + provider.defaultTimeoutMs;
    const until =
      provider.deadline === 'own' || deadlineAt === null
        ? own
        : Math.min(own, Math.max(deadlineAt, started + MIN_CALL_MS));
    const ctx = (signal: AbortSignal): ProviderContext => ({
      signal,
      deadlineAt: until,
      ...(progress ? { progress } : {}),
      settings: this.settings,
      upstream: (upstream, call) => this.guards.run(upstream, until, call, { ownTimeoutAt: own }),
      ...(this.options.localIndex ? { localIndex: this.options.localIndex } : {}),
      ...(this.options.watchlists ? { watchlists: this.options.watchlists } : {}),
    });
    const answer = await this.guards.run(
      { id: provider.id, rateLimit: rateLimitOf(provider, this.settings), breaker: provider.breaker !== false },
      until,
      (signal) => provider.lookup(kind, input, ctx(signal)),
      { ownTimeoutAt: own },
    );
    offContract(provider.id, PROVIDER_ITEM_SCHEMAS[kind], answer.items);
    const took = Date.now() - started;
    const reports: SourceReport[] = answer.reports ?? [
      {
        provider: provider.id,
        outcome: answer.outcome,
        took_ms: took,
        ...((answer.outcome === 'unknown' || answer.outcome === 'timeout') && answer.detail
          ? { detail: shortDetail(answer.detail) }
          : {}),
      },
    ];
    return {
      precedence,
      items: answer.items,
      ...(answer.identities ? { identities: answer.identities } : {}),
      reports,
    };
  }
}

/**
 * A lookup's progress while it runs (FanOutProgress): the parts of the providers done, and what the running
 * ones that report progress know so far. Writes start once one of them reports, every `everyMs` at most, one at
 * a time, only after a change; `stop` waits for the write under way, so none comes after the lookup's answer.
 */
class ProgressTracker<K extends LookupKind> {
  private readonly done = new Map<number, Run<K> | null>();
  private readonly running = new Map<number, { precedence: number; snapshot: () => ProviderProgress }>();
  private changed = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | null = null;

  constructor(
    private readonly providers: number,
    private readonly everyMs: number,
    private readonly write: (runs: Run<K>[], pending: number) => Promise<void>,
  ) {}

  /** What provider `i` calls each time one of its upstreams answered. */
  reporter(i: number, precedence: number): ProviderContext['progress'] {
    return (snapshot) => {
      if (this.stopped || this.done.has(i)) return;
      this.running.set(i, { precedence, snapshot });
      this.changed = true;
      this.timer ??= setInterval(() => this.tick(), this.everyMs).unref();
    };
  }

  finished(i: number, run: Run<K> | null): void {
    this.running.delete(i);
    this.done.set(i, run);
    this.changed = true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.writing;
  }

  private tick(): void {
    if (this.stopped || !this.changed || this.writing) return;
    this.changed = false;
    // In the providers' order, as the answer lists them; a provider still running that reports nothing counts as
    // one source pending.
    const runs: Run<K>[] = [];
    let pending = 0;
    for (let i = 0; i < this.providers; i++) {
      const done = this.done.get(i);
      const running = this.running.get(i);
      if (done) runs.push(done);
      else if (running) {
        const now = running.snapshot();
        pending += now.pending;
        runs.push({
          precedence: running.precedence,
          items: now.items as ProviderItemByKind[K][],
          reports: now.reports,
        });
      } else if (done === undefined) pending++;
    }
    this.writing = this.write(runs, pending)
      .catch(() => undefined)
      .finally(() => {
        this.writing = null;
      });
  }
}

/** Throws, saying where, when a provider's items are not a list of items of its kind's result schema. */
function offContract(providerId: string, schema: (typeof PROVIDER_ITEM_SCHEMAS)[LookupKind], items: unknown): void {
  if (!Array.isArray(items)) throw new Error(`${providerId}: items off the result contract: not a list`);
  for (const [i, item] of items.entries()) {
    const checked = schema.safeParse(item);
    if (checked.success) continue;
    const issue = checked.error.issues[0]!;
    const at = [i, ...issue.path].join('.');
    throw new Error(`${providerId}: items off the result contract: ${at}: ${issue.message}`);
  }
}
