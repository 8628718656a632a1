import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LOOKUP_KINDS } from '@dossier/domain';
import type { LookupQueues } from '@dossier/contracts';
import { LOOKUP_QUEUES, METRICS } from '../infra/tokens';

const QUEUE_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed'] as const;
/** Lookups may wait up to a minute for their outcome, hence the long tail. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** The label for requests no route matched: never the raw URL, so label values stay bounded. */
const UNMATCHED = 'unmatched';

type HttpLabel = 'method' | 'route' | 'status';
interface HttpSeries {
  count: Counter.Internal;
  duration: Histogram.Internal<HttpLabel>;
}

/**
 * Prometheus metrics: process defaults, HTTP requests by route pattern (one Fastify onResponse hook),
 * and lookup-queue depths read from Redis when scraped.
 */
@Injectable()
export class MetricsService implements OnModuleInit {
  private readonly logger = new Logger(MetricsService.name);
  private readonly requests: Counter<HttpLabel>;
  private readonly durations: Histogram<HttpLabel>;
  /** Labelled children, looked up once per label set instead of hashing labels on every request. */
  private readonly series = new Map<string, HttpSeries>();

  constructor(
    @Inject(LOOKUP_QUEUES) queues: LookupQueues,
    @Inject(METRICS) private readonly registry: Registry,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    this.requests = new Counter<HttpLabel>({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    });
    this.durations = new Histogram<HttpLabel>({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to finishing its answer, by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
    const logger = this.logger;
    new Gauge<'queue' | 'state'>({
      name: 'dossier_queue_jobs',
      help: 'Jobs in each lookup queue by state, read when scraped',
      labelNames: ['queue', 'state'],
      registers: [registry],
      async collect() {
        this.reset(); // a queue that cannot be read reports nothing rather than a stale count
        const counts = await Promise.allSettled(LOOKUP_KINDS.map((kind) => queues[kind].getJobCounts(...QUEUE_STATES)));
        counts.forEach((result, i) => {
          const queue = queues[LOOKUP_KINDS[i]!].name;
          if (result.status === 'rejected') {
            logger.warn(`could not read the ${queue} queue's counts: ${String(result.reason)}`);
            return;
          }
          for (const state of QUEUE_STATES) this.set({ queue, state }, result.value[state] ?? 0);
        });
      },
    });
  }

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onResponse', (request, reply, done) => {
      this.observe(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime);
      done();
    });
  }

  observe(method: string, route: string | undefined, status: number, elapsedMs: number): void {
    const key = `${method} ${route ?? UNMATCHED} ${status}`;
    let series = this.series.get(key);
    if (!series) {
      const labels = { method, route: route ?? UNMATCHED, status: String(status) };
      series = { count: this.requests.labels(labels), duration: this.durations.labels(labels) };
      this.series.set(key, series);
    }
    series.count.inc();
    series.duration.observe(elapsedMs / 1000);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}
