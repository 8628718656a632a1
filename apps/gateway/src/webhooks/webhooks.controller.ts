import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CurrentAuth, type AuthContext } from '../auth/auth-context';
import { parseBody } from '../http/validation';
import { ApiDoc, DELETE_BY_ID_ERRORS } from '../openapi/api-doc.decorator';
import {
  createWebhookBody,
  deliveryListResponse,
  webhookCreatedResponse,
  webhookDeletedResponse,
  webhookListResponse,
} from './webhooks.schema';
import { WebhooksService } from './webhooks.service';

const SIGNING =
  'Each delivery is a POST of `{id: "evt_…", type, created_at, data}` (data: the search envelope as `GET /v1/searches/{id}` gives it, or for `batch.completed` the batch as `GET /v1/batches/{id}` gives it) ' +
  'signed with `Dossier-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with the secret>`. ' +
  'Any 2xx within 10 s is delivered; anything else is retried with exponential backoff and jitter for at least 24 hours, then recorded failed. ' +
  'Delivery is at least once: dedupe on `id`. Nor is it ordered: a retried event arrives after later ones, and `batch.completed` ' +
  "may arrive before its searches' events; order by `created_at`.";

@Controller('v1')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post('webhooks')
  @HttpCode(201)
  @ApiDoc({
    tag: 'webhooks',
    summary: 'Register a webhook',
    description:
      'Returns the signing secret, shown only here. URLs must be https and must not resolve to loopback, private, ' +
      'link-local or metadata addresses (400) unless the operator allows them (`WEBHOOK_ALLOW_PRIVATE=true`, which also allows http). ' +
      'Registering costs nothing. `503 unavailable` with `Retry-After: 3600` when the server has no WEBHOOK_SECRET_KEY (webhooks are off until its operator sets one). ' +
      SIGNING,
    body: createWebhookBody,
    status: 201,
    response: webhookCreatedResponse,
    errors: [
      'invalid_json',
      'validation_error',
      'unauthorized',
      'unsupported_media_type',
      'payload_too_large',
      'rate_limited',
      'unavailable',
    ],
  })
  create(@CurrentAuth() auth: AuthContext, @Body() body: unknown) {
    return this.webhooks.create(auth, parseBody(createWebhookBody, body));
  }

  @Get('webhooks')
  @ApiDoc({
    tag: 'webhooks',
    summary: "The account's webhooks",
    description: 'Oldest first, without their secrets.',
    status: 200,
    response: webhookListResponse,
    errors: ['unauthorized', 'rate_limited', 'unavailable'],
  })
  list(@CurrentAuth() auth: AuthContext) {
    return this.webhooks.list(auth);
  }

  @Delete('webhooks/:id')
  @HttpCode(200)
  @ApiDoc({
    tag: 'webhooks',
    summary: 'Delete a webhook',
    description: 'No event is sent to it from then on; deliveries already retrying stop at their next attempt.',
    status: 200,
    response: webhookDeletedResponse,
    pathParams: { id: 'webhook id (wh_…)' },
    errors: DELETE_BY_ID_ERRORS,
  })
  delete(@CurrentAuth() auth: AuthContext, @Param('id') id: string) {
    return this.webhooks.delete(auth, id);
  }

  @Get('webhooks/:id/deliveries')
  @ApiDoc({
    tag: 'webhooks',
    summary: "A webhook's delivery attempts",
    description:
      'Every attempt, newest first (the latest 100): event, attempt number, outcome, status code or error, duration. ' +
      "Attempts older than the server's retention period (RESULTS_TTL_DAYS, 30 days by default) are deleted.",
    status: 200,
    response: deliveryListResponse,
    pathParams: { id: 'webhook id (wh_…)' },
    errors: ['unauthorized', 'not_found', 'rate_limited', 'unavailable'],
  })
  deliveries(@CurrentAuth() auth: AuthContext, @Param('id') id: string) {
    return this.webhooks.deliveries(auth, id);
  }
}
