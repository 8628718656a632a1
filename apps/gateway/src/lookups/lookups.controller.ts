import { Body, Controller, Get, Headers, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type LookupKind } from '@dossier/domain';
import type { LookupInputByKind } from '@dossier/contracts';
import { parsePhone } from '@dossier/domain';
import { CurrentAuth, type AuthContext } from '../auth/auth-context';
import { parseBody } from '../http/validation';
import { parsePrefer } from '../http/prefer';
import { ApiDoc, type ApiDocOptions } from '../openapi/api-doc.decorator';
import { LookupsService, type LookupRequest } from './lookups.service';
import type { LookupAnswer } from './search-envelope';
import {
  companyBody,
  pendingEnvelope,
  personBody,
  searchBody,
  successEnvelope,
  verifyEmailBody,
  verifyPhoneBody,
} from './lookups.schema';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

const lookupDoc = (summary: string, body: ApiDocOptions['body'], description: string): ApiDocOptions => ({
  tag: 'lookups',
  summary,
  description,
  body,
  lookup: true,
  status: 200,
  response: successEnvelope,
  alternatives: [
    {
      status: 202,
      description: 'Still running (Prefer: respond-async, or the wait ran out); poll Location',
      response: pendingEnvelope,
    },
  ],
  errors: [
    'invalid_json',
    'validation_error',
    'unauthorized',
    'insufficient_credits',
    'idempotency_conflict',
    'unsupported_media_type',
    'payload_too_large',
    'rate_limited',
    'unavailable',
  ],
});

type Submit = <K extends LookupKind>(req: LookupRequest<K>) => Promise<void>;

@Controller('v1')
export class LookupsController {
  constructor(private readonly lookups: LookupsService) {}

  @Post('search')
  @ApiDoc(
    lookupDoc(
      'Generic search',
      searchBody,
      '`type` routes to a lookup with `query` as its main field: person → name, company → company_name, email → email, phone → phone (with `country` as default region), username → a person search by username.',
    ),
  )
  async search(
    @Body() raw: unknown,
    @Req() req: FastifyRequest,
    @Res() res: FastifyReply,
    @CurrentAuth() auth: AuthContext,
    @Headers() h: Record<string, string | undefined>,
  ) {
    const b = parseBody(searchBody, raw);
    const purpose = b.permissible_purpose ?? null;
    const submit = this.submitter(req, res, auth, h);
    const route = '/v1/search';
    switch (b.type) {
      case 'person':
        return submit({
          kind: 'person',
          input: { name: b.query, ...(b.country ? { country: b.country } : {}) },
          purpose,
          route,
          body: raw,
        });
      case 'username':
        return submit({
          kind: 'person',
          input: { username: b.query, ...(b.country ? { country: b.country } : {}) },
          purpose,
          route,
          body: raw,
        });
      case 'company':
        return submit({
          kind: 'company',
          input: { company_name: b.query, ...(b.country ? { country: b.country } : {}) },
          purpose,
          route,
          body: raw,
        });
      case 'email':
        return submit({ kind: 'email', input: { email: b.query }, purpose, route, body: raw });
      case 'phone':
        return submit({ kind: 'phone', input: phoneInput(b.query, b.country, 'query'), purpose, route, body: raw });
    }
  }

  @Post('search/person')
  @ApiDoc(
    lookupDoc(
      'Person search',
      personBody,
      'At least one of name, email, phone, username. Results carry match_score and matched_on, best first.',
    ),
  )
  async person(
    @Body() raw: unknown,
    @Req() req: FastifyRequest,
    @Res() res: FastifyReply,
    @CurrentAuth() auth: AuthContext,
    @Headers() h: Record<string, string | undefined>,
  ) {
    const { permissible_purpose, ...input } = parseBody(personBody, raw);
    return this.submitter(
      req,
      res,
      auth,
      h,
    )({ kind: 'person', input, purpose: permissible_purpose ?? null, route: '/v1/search/person', body: raw });
  }

  @Post('search/company')
  @ApiDoc(lookupDoc('Company search', companyBody, 'At least one of company_name, domain, registration_number.'))
  async company(
    @Body() raw: unknown,
    @Req() req: FastifyRequest,
    @Res() res: FastifyReply,
    @CurrentAuth() auth: AuthContext,
    @Headers() h: Record<string, string | undefined>,
  ) {
    const { permissible_purpose, ...input } = parseBody(companyBody, raw);
    return this.submitter(
      req,
      res,
      auth,
      h,
    )({ kind: 'company', input, purpose: permissible_purpose ?? null, route: '/v1/search/company', body: raw });
  }

  @Post('verify/email')
  @ApiDoc(lookupDoc('Verify an e-mail address', verifyEmailBody, 'Always one result describing the address.'))
  async email(
    @Body() raw: unknown,
    @Req() req: FastifyRequest,
    @Res() res: FastifyReply,
    @CurrentAuth() auth: AuthContext,
    @Headers() h: Record<string, string | undefined>,
  ) {
    const { permissible_purpose, ...input } = parseBody(verifyEmailBody, raw);
    return this.submitter(
      req,
      res,
      auth,
      h,
    )({ kind: 'email', input, purpose: permissible_purpose ?? null, route: '/v1/verify/email', body: raw });
  }

  @Post('verify/phone')
  @ApiDoc(
    lookupDoc(
      'Look up a phone number',
      verifyPhoneBody,
      'Validity, line type, original carrier, location and time zones from libphonenumber. Unparseable input is 400; a parseable but invalid number is a result with valid: false.',
    ),
  )
  async phone(
    @Body() raw: unknown,
    @Req() req: FastifyRequest,
    @Res() res: FastifyReply,
    @CurrentAuth() auth: AuthContext,
    @Headers() h: Record<string, string | undefined>,
  ) {
    const b = parseBody(verifyPhoneBody, raw);
    return this.submitter(
      req,
      res,
      auth,
      h,
    )({
      kind: 'phone',
      input: phoneInput(b.phone, b.country, 'phone'),
      purpose: b.permissible_purpose ?? null,
      route: '/v1/verify/phone',
      body: raw,
    });
  }

  @Get('searches/:id')
  @ApiDoc({
    tag: 'lookups',
    summary: 'A search by id',
    description:
      'The same envelope as the lookup: `status: "pending"` (202) while it runs, the error envelope if it failed. Only the account that ran it can see it.',
    status: 200,
    response: successEnvelope,
    alternatives: [{ status: 202, description: 'Still running', response: pendingEnvelope }],
    credits: true,
    pathParams: { id: 'search id (srch_…)' },
    errors: ['unauthorized', 'not_found', 'rate_limited', 'unavailable'],
  })
  async getSearch(
    @Param('id') id: string,
    @Req() req: FastifyRequest,
    @Res() res: FastifyReply,
    @CurrentAuth() auth: AuthContext,
  ) {
    send(res, String(req.id), await this.lookups.get(id, auth));
  }

  private submitter(
    req: FastifyRequest,
    res: FastifyReply,
    auth: AuthContext,
    h: Record<string, string | undefined>,
  ): Submit {
    const idempotencyKey = h['idempotency-key'];
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw DomainError.validation([{ field: 'Idempotency-Key', issue: 'must be 1–255 printable ASCII characters' }]);
    }
    const prefer = parsePrefer(h['prefer']);
    return async (lookup) => {
      const answer = await this.lookups.submit(lookup, {
        auth,
        requestId: String(req.id),
        idempotencyKey: idempotencyKey ?? null,
        prefer,
      });
      if (prefer.respondAsync) void res.header('Preference-Applied', 'respond-async');
      send(res, String(req.id), answer);
    };
  }
}

/** Phone input is parsed here, before anything is charged: unparseable is 400. */
function phoneInput(phone: string, country: string | undefined, field: string): LookupInputByKind['phone'] {
  try {
    parsePhone(phone, country);
  } catch (err) {
    if (err instanceof DomainError && err.details) {
      throw DomainError.validation(err.details.map((d) => ({ ...d, field: d.field === 'phone' ? field : d.field })));
    }
    throw err;
  }
  return country ? { phone, country } : { phone };
}

function send(res: FastifyReply, requestId: string, answer: LookupAnswer): void {
  void res.status(answer.httpStatus).headers(answer.headers);
  // A replay returns the original search and spends nothing.
  if (answer.replayed) void res.header('Idempotent-Replayed', 'true').header('X-Credits-Spent', '0');
  const body = answer.body['status'] === 'error' ? { ...answer.body, request_id: requestId } : answer.body;
  void res.send(body);
}
