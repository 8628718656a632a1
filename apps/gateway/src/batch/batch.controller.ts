import { Body, Controller, Get, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type { BatchBody } from '@dossier/contracts';
import { CurrentAuth, type AuthContext } from '../auth/auth-context';
import { ApiDoc } from '../openapi/api-doc.decorator';
import { LookupCtx } from '../lookups/lookup-call.decorator';
import type { LookupCall } from '../lookups/lookups.service';
import { BATCH_MAX_ITEMS, batchBody, batchResponse, pendingBatchResponse } from './batch.schema';
import { BatchService } from './batch.service';

@Controller('v1')
export class BatchController {
  constructor(private readonly batches: BatchService) {}

  @Post('batch')
  @ApiDoc({
    tag: 'lookups',
    summary: 'Many lookups in one request',
    description:
      `1 to ${BATCH_MAX_ITEMS} requests of any kinds, each \`{kind, input}\` with that endpoint's body. Each item is validated ` +
      'on its own: an invalid one gets its error object in its place and costs nothing. Valid items reserve their credits ' +
      'one by one, in order, as single lookups; an item the balance does not cover gets `insufficient_credits` in its place. ' +
      "Each runs as its own job on its kind's queue. The answer waits like a single lookup (`Prefer: wait=N`): 200 when every " +
      'item is done, else 202 with the items so far (poll `Location`). `Idempotency-Key` applies to the whole batch. ' +
      'A `batch.completed` webhook event carries this body once the last item settles (not sent when no item started a lookup).',
    body: batchBody,
    lookup: true,
    // Each item's envelope says what it holds; the batch as a whole carries no credit headers.
    credits: false,
    status: 200,
    response: batchResponse,
    alternatives: [
      {
        status: 202,
        description: 'Some items still run (Prefer: respond-async, or the wait ran out)',
        response: pendingBatchResponse,
      },
    ],
    errors: [
      'invalid_json',
      'validation_error',
      'unauthorized',
      'idempotency_conflict',
      'unsupported_media_type',
      'payload_too_large',
      'rate_limited',
      'unavailable',
    ],
  })
  async submit(@Body() raw: unknown, @LookupCtx() call: LookupCall, @Res() res: FastifyReply): Promise<void> {
    const outcome = await this.batches.submit(raw, call);
    if (call.prefer.respondAsync) void res.header('Preference-Applied', 'respond-async');
    if (outcome.replayed) void res.header('Idempotent-Replayed', 'true');
    respond(res, outcome.body);
  }

  @Get('batches/:id')
  @ApiDoc({
    tag: 'lookups',
    summary: 'A batch by id',
    description:
      'The same body as the batch answered: 202 while any item runs. Only the account that ran it can see it.',
    status: 200,
    response: batchResponse,
    alternatives: [{ status: 202, description: 'Some items still run', response: pendingBatchResponse }],
    pathParams: { id: 'batch id (bat_…)' },
    errors: ['unauthorized', 'not_found', 'rate_limited', 'unavailable'],
  })
  async get(@Param('id') id: string, @CurrentAuth() auth: AuthContext, @Res() res: FastifyReply): Promise<void> {
    respond(res, await this.batches.get(id, auth));
  }
}

/** 200 when every item is done; 202 with Location while some run. */
function respond(res: FastifyReply, body: BatchBody): void {
  if (body.status === 'pending') {
    void res.status(202).headers({ Location: `/v1/batches/${body.batch_id}`, 'Retry-After': '1' });
  } else {
    void res.status(200);
  }
  void res.send(body);
}
