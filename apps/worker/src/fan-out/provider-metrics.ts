import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { CircuitState } from 'cockatiel';
import type { SourceReport } from '@dossier/contracts';
import type { GuardEvents } from './upstream-guards';

/** Seconds; upstream calls are bounded by their deadlines (30 s at most). */
const BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** `dossier_provider_breaker_state`: 0 closed, 1 half-open, 2 open (cockatiel's isolated counts as open). */
const BREAKER_VALUE: Record<CircuitState, number> = {
  [CircuitState.Closed]: 0,
  [CircuitState.HalfOpen]: 1,
  [CircuitState.Open]: 2,
  [CircuitState.Isolated]: 2,
};

/** Prometheus metrics per provider (and per username site): calls by outcome, call durations, breaker state. */
export class ProviderMetrics implements GuardEvents {
  private readonly calls: Counter<'provider' | 'outcome'>;
  private readonly duration: Histogram<'provider' | 'outcome'>;
  private readonly breaker: Gauge<'provider'>;

  constructor(registry: Registry) {
    this.calls = new Counter({
      name: 'dossier_provider_calls_total',
      help: 'Provider calls by provider (username sites as site:<Name>) and outcome',
      labelNames: ['provider', 'outcome'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: 'dossier_provider_call_duration_seconds',
      help: 'How long provider calls took (calls that were made: not skipped), by provider and outcome',
      labelNames: ['provider', 'outcome'],
      buckets: BUCKETS,
      registers: [registry],
    });
    this.breaker = new Gauge({
      name: 'dossier_provider_breaker_state',
      help: "Each upstream's circuit breaker in this process: 0 closed, 1 half-open, 2 open",
      labelNames: ['provider'],
      registers: [registry],
    });
  }

  observe(report: SourceReport): void {
    this.calls.inc({ provider: report.provider, outcome: report.outcome });
    if (report.outcome !== 'skipped')
      this.duration.observe({ provider: report.provider, outcome: report.outcome }, report.took_ms / 1000);
  }

  breakerState(upstream: string, state: CircuitState): void {
    this.breaker.set({ provider: upstream }, BREAKER_VALUE[state]);
  }
}
