import { setTimeout as sleep } from 'node:timers/promises';
import {
  BrokenCircuitError,
  CircuitState,
  ConsecutiveBreaker,
  ExponentialBackoff,
  TaskCancelledError,
  circuitBreaker,
  handleWhen,
  type CircuitBreakerPolicy,
  type IBackoff,
} from 'cockatiel';
import { deadlineSignal, untilAborted } from '@dossier/domain';
import type { RedisTokenBucket } from '@dossier/runtime';
import { ProviderError, SkippedCall, type RateLimit } from '@dossier/providers';

export interface GuardSettings {
  /** Consecutive failures that open an upstream's circuit. */
  breakerThreshold: number;
  /** How long an open circuit waits before letting one probe call through (half-open). */
  halfOpenAfterMs: number;
  /** Attempts per call, the first included, for transient failures (5xx, refused, reset). */
  maxAttempts: number;
}

/**
 * The longest an upstream is held off for the wait its 429 names (Retry-After, or a vendor's reset time):
 * a vendor's `Retry-After: 864000` (ten days) must not silence it for ten days. Past the hour, one call
 * asks again, and a 429 holds it off again.
 */
export const MAX_HOLD_MS = 3_600_000;

export interface GuardEvents {
  breakerState(upstream: string, state: CircuitState): void;
}

/**
 * Failures that say the upstream is broken (count towards its breaker); a 429 or a bot wall say it is
 * alive, and a request it refuses (`rejected`) says nothing about the next one.
 */
function breaksCircuit(error: unknown): boolean {
  return (
    error instanceof ProviderError &&
    !(error instanceof CallersDeadline) &&
    ['unavailable', 'timeout', 'malformed', 'unrecoverable'].includes(error.code)
  );
}

/**
 * A call the caller's deadline ended before the upstream's own timeout would have: the time ran out on our
 * side (a job that waited in the queue, a short `Prefer: wait`), so it says nothing about the upstream and
 * does not count towards its breaker. Reported as `timeout`, saying whose time it was.
 */
export class CallersDeadline extends ProviderError {}

/**
 * The guards every upstream call passes, per upstream id: a circuit breaker (cockatiel; in this process),
 * bounded retries with jittered exponential backoff — or the upstream's Retry-After — for transient
 * failures only, a rate limit shared by every worker process (a token bucket in Redis, `<ID>_RATE_LIMIT`),
 * and a hold: after a 429 that names a wait, the upstream is not called (`skipped`) until the wait ends, at
 * most MAX_HOLD_MS — in every worker process when it has a shared limit (the hold is its bucket's veto key),
 * in this one otherwise. All of it inside the call's deadline: a retry or a wait for a token that would pass
 * it does not happen.
 */
export class UpstreamGuards {
  private readonly breakers = new Map<string, CircuitBreakerPolicy>();
  private readonly backoff = new ExponentialBackoff({ initialDelay: 100, maxDelay: 2000 });
  /** Upstreams held off in this process: id → the epoch ms the hold ends (ADR 0038). */
  private readonly holds = new Map<string, number>();
  /** Open circuits: id → the epoch ms its half-open probe is due (cockatiel's own time, or a moment after). */
  private readonly probeAt = new Map<string, number>();

  constructor(
    private readonly bucket: Pick<RedisTokenBucket, 'take' | 'veto'>,
    private readonly keyPrefix: string,
    private readonly settings: GuardSettings,
    private readonly events: GuardEvents,
  ) {}

  /**
   * Runs `call` for `upstream`, by `deadlineAt` (epoch ms). Throws ProviderError (mapped at the provider's
   * edge, or `timeout`/`rate_limited` from here) or SkippedCall when the circuit is open or the upstream is
   * held off. An upstream with `breaker: false` (Provider.breaker: one per input, not one vendor) has no
   * circuit and no hold. `ownTimeoutAt`: when the upstream's own timeout would end the call; a deadline
   * before it is the caller's, and a call it ends is a CallersDeadline, not the upstream's failure.
   */
  async run<T>(
    upstream: { id: string; rateLimit?: RateLimit | null; breaker?: boolean },
    deadlineAt: number,
    call: (signal: AbortSignal) => Promise<T>,
    { ownTimeoutAt = deadlineAt }: { ownTimeoutAt?: number } = {},
  ): Promise<T> {
    const held = this.holds.get(upstream.id);
    if (held !== undefined) {
      if (held > Date.now()) throw heldOff(upstream.id, held);
      this.holds.delete(upstream.id);
    }
    const breaker = upstream.breaker === false ? null : this.breaker(upstream.id);
    const budgetMs = Math.max(1, deadlineAt - Date.now());
    const { signal, clear } = deadlineSignal(budgetMs);
    const callers = deadlineAt < ownTimeoutAt;
    /** What the caller's deadline ended (anything but the upstream's own answer), as the caller's timeout. */
    const ours = (error: unknown): unknown =>
      callers && signal.aborted && !(error instanceof ProviderError && error.code !== 'timeout')
        ? new CallersDeadline(
            'timeout',
            `${upstream.id}: not answered within the ${budgetMs} ms the request's wait left it ` +
              `(its own timeout is longer; not counted against ${upstream.id})`,
            undefined,
            { cause: error },
          )
        : error;
    const attempts = async (): Promise<T> => {
      let backoff: IBackoff<unknown> | undefined;
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.attempt(upstream, signal, call);
        } catch (caught) {
          const error = ours(caught);
          if (!(error instanceof ProviderError) || !error.retryable || attempt >= this.settings.maxAttempts)
            throw error;
          backoff = (backoff ?? this.backoff).next(undefined);
          // The upstream's Retry-After (a 503's), when it names one, else the jittered backoff.
          const wait = Math.max(backoff.duration, error.retryAfterMs ?? 0);
          // A retry that could only time out does not happen: the upstream's own answer is the outcome.
          if (Date.now() + wait >= deadlineAt) throw pastTheDeadline(error, wait);
          await sleep(wait, undefined, { signal });
          // Nor does one that the shared limit or a hold refuses its token: the upstream failed, and says so.
          await this.acquire(upstream, signal, deadlineAt).catch(() => Promise.reject(error));
        }
      }
    };
    try {
      // The first token is taken before the breaker sees the call: a call that the shared limit refuses, or
      // that another worker's hold skips, asked the upstream nothing and counts neither way (cockatiel takes
      // what it is not told to handle for a success of a half-open circuit, and closes it). An open circuit
      // skips first: its calls take no token.
      if (breaker && this.isOpen(upstream.id, breaker)) throw this.skipped(upstream.id, breaker);
      await this.acquire(upstream, signal, deadlineAt);
      return await (breaker ? breaker.execute(attempts, signal) : attempts());
    } catch (error) {
      if (error instanceof BrokenCircuitError && breaker) throw this.skipped(upstream.id, breaker);
      if (error instanceof TaskCancelledError || (signal.aborted && !(error instanceof ProviderError))) {
        throw ours(timedOut(upstream.id, error));
      }
      throw error;
    } finally {
      clear();
    }
  }

  /** One attempt: the call (its token already taken); a 429 of the upstream's that names a wait holds it off. */
  private async attempt<T>(
    upstream: { id: string; rateLimit?: RateLimit | null; breaker?: boolean },
    signal: AbortSignal,
    call: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    try {
      return await untilDeadline(call(signal), signal, upstream.id);
    } catch (error) {
      if (error instanceof ProviderError && error.code === 'rate_limited' && error.retryAfterMs)
        this.hold(upstream, error.retryAfterMs);
      throw error;
    }
  }

  /**
   * Holds `upstream` off for `ms` (at most MAX_HOLD_MS): in this process, and — for one with a shared limit
   * — in every worker, through its bucket's veto key. Not for an upstream that is each input's own.
   */
  private hold(upstream: { id: string; rateLimit?: RateLimit | null; breaker?: boolean }, ms: number): void {
    if (upstream.breaker === false) return;
    const holdMs = Math.min(ms, MAX_HOLD_MS);
    this.holds.set(upstream.id, Date.now() + holdMs);
    // Not awaited (ADR 0038): the 429 is the call's answer now, and this process's next call reads the hold
    // from memory, not Redis. Should Redis fail to take the hold, this process keeps it, and every other
    // worker learns the wait from its own next 429.
    if (upstream.rateLimit) void this.bucket.veto(this.holdKey(upstream.id), holdMs).catch((error: unknown) => error);
  }

  private holdKey(id: string): string {
    return `${this.keyPrefix}:provider-hold:${id}`;
  }

  /** The breaker state of every upstream seen so far (for metrics). */
  states(): [string, CircuitState][] {
    return [...this.breakers].map(([id, b]) => [id, b.state]);
  }

  private breaker(id: string): CircuitBreakerPolicy {
    let breaker = this.breakers.get(id);
    if (!breaker) {
      breaker = circuitBreaker(handleWhen(breaksCircuit), {
        halfOpenAfter: this.settings.halfOpenAfterMs,
        breaker: new ConsecutiveBreaker(this.settings.breakerThreshold),
      });
      breaker.onStateChange((state) => this.events.breakerState(id, state));
      breaker.onBreak(() => this.probeAt.set(id, Date.now() + this.settings.halfOpenAfterMs));
      this.breakers.set(id, breaker);
    }
    return breaker;
  }

  /** Whether `id`'s circuit is open and its half-open probe not yet due: a call would be skipped. */
  private isOpen(id: string, breaker: CircuitBreakerPolicy): boolean {
    return breaker.state === CircuitState.Open && Date.now() < (this.probeAt.get(id) ?? 0);
  }

  private skipped(id: string, breaker: CircuitBreakerPolicy): SkippedCall {
    const last = breaker.lastFailure;
    const why = last && 'error' in last && last.error instanceof Error ? `: last failure ${last.error.message}` : '';
    return new SkippedCall(
      `${id}: circuit open after ${this.settings.breakerThreshold} consecutive failures${why}; ` +
        `retried after ${Math.round(this.settings.halfOpenAfterMs / 1000)}s`,
    );
  }

  /**
   * Waits for a token of the upstream's shared bucket, if it has a limit; `rate_limited` if none comes in
   * time. While another worker holds the upstream off (the bucket's veto), SkippedCall — and this process
   * holds it off too, until the same time, without asking Redis again.
   */
  private async acquire(
    upstream: { id: string; rateLimit?: RateLimit | null; breaker?: boolean },
    signal: AbortSignal,
    deadlineAt: number,
  ): Promise<void> {
    const limit = upstream.rateLimit;
    if (!limit) return;
    const key = `${this.keyPrefix}:provider-rate:${upstream.id}`;
    const veto = upstream.breaker === false ? undefined : this.holdKey(upstream.id);
    const ratePerS = (limit.max * 1000) / limit.perMs;
    for (;;) {
      const decision = await this.bucket.take(key, ratePerS, limit.max, veto);
      if (decision.vetoed) {
        const until = Date.now() + Math.min(Math.max(decision.retryMs, 1), MAX_HOLD_MS);
        this.holds.set(upstream.id, until);
        throw heldOff(upstream.id, until);
      }
      if (decision.allowed) return;
      const deadlineLeft = deadlineAt - Date.now();
      if (decision.retryMs >= deadlineLeft) {
        throw new ProviderError(
          'rate_limited',
          `${upstream.id}: the shared limit of ${limit.max} calls per ${Math.round(limit.perMs / 1000)}s is used up`,
          decision.retryMs,
        );
      }
      await sleep(decision.retryMs, undefined, { signal });
    }
  }
}

/**
 * `work`, raced against its deadline: a call that ignores its signal still cannot outlive it. One that heeds
 * it and rejects at once with its own ProviderError (in the same turn of the event loop) is heard: its
 * message can say how far it got (the mailbox probe's hosts), where `timedOut` can only say that it ended.
 * Nothing but an AbortController and a listener per call; the wait of one turn is only ever paid on a deadline.
 */
function untilDeadline<T>(work: Promise<T>, deadline: AbortSignal, id: string): Promise<T> {
  const heard = new AbortController();
  const hear = (): void => void setImmediate(() => heard.abort());
  if (deadline.aborted) hear();
  else deadline.addEventListener('abort', hear, { once: true });
  return untilAborted(work, heard.signal, () => timedOut(id)).finally(() =>
    deadline.removeEventListener('abort', hear),
  );
}

/** A call not made while its upstream is held off: `skipped`, saying until when. */
function heldOff(id: string, until: number): SkippedCall {
  const at = new Date(until).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return new SkippedCall(`${id}: not called until ${at}, the wait its last 429 asked for (at most 1h)`);
}

/** A transient failure not retried, as its wait would end past the deadline: the failure itself, saying so. */
function pastTheDeadline(error: ProviderError, waitMs: number): ProviderError {
  if (error.retryAfterMs === undefined || error.retryAfterMs < waitMs) return error;
  return new ProviderError(
    error.code,
    `${error.message}; its Retry-After (${Math.ceil(waitMs / 1000)}s) ends past the deadline`,
    error.retryAfterMs,
    { cause: error },
  );
}

function timedOut(id: string, cause?: unknown): ProviderError {
  return new ProviderError('timeout', `${id}: no answer before the deadline`, undefined, { cause });
}
