import type { RedisClient } from '@dossier/runtime';
import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { DataSource } from 'typeorm';
import { z } from 'zod';
import { probe } from '@dossier/domain';
import { Public } from '../auth/public.decorator';
import { ApiDoc } from '../openapi/api-doc.decorator';
import { DATA_SOURCE, REDIS } from '../infra/tokens';

const CHECK_TIMEOUT_MS = 1000;

const healthResponse = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    checks: z.record(z.string(), z.enum(['ok', 'unavailable'])).optional(),
  })
  .meta({ examples: [{ status: 'ok', checks: { postgres: 'ok', redis: 'ok' } }] });

@Public()
@Controller('health')
export class HealthController {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  @Get('live')
  @ApiDoc({
    tag: 'operations',
    summary: 'Liveness: the process answers',
    auth: false,
    status: 200,
    response: healthResponse,
    errors: [],
  })
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiDoc({
    tag: 'operations',
    summary: 'Readiness: Redis and Postgres reachable (503 otherwise)',
    auth: false,
    status: 200,
    response: healthResponse,
    alternatives: [
      { status: 503, description: 'Redis or Postgres unreachable; `checks` says which', response: healthResponse },
    ],
    errors: [],
  })
  async ready(@Res() res: FastifyReply) {
    const [postgres, redis] = await Promise.all([
      probe(() => this.db.query('SELECT 1'), CHECK_TIMEOUT_MS),
      probe(() => this.redis.ping(), CHECK_TIMEOUT_MS),
    ]);
    const ok = postgres === 'ok' && redis === 'ok';
    void res.status(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', checks: { postgres, redis } });
  }
}
