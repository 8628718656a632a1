import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/public.decorator';
import { ApiDoc } from '../openapi/api-doc.decorator';
import { MetricsService } from './metrics.service';

@Public()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @ApiDoc({
    tag: 'operations',
    summary: 'Prometheus metrics',
    description:
      'Process metrics, `http_requests_total` and `http_request_duration_seconds` by method, route pattern and status, `dossier_queue_jobs` by lookup queue and job state, and `dossier_credits_total` by lookup kind and phase. Served here only while `METRICS_PORT` is unset; with it set, on that port alone.',
    auth: false,
    status: 200,
    contentType: 'text/plain; version=0.0.4',
    errors: [],
  })
  async scrape(@Res() res: FastifyReply): Promise<void> {
    const body = await this.metrics.scrape();
    void res.header('Content-Type', this.metrics.contentType).header('Cache-Control', 'no-store').send(body);
  }
}
