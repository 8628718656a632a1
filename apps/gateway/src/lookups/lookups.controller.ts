import { Body, Controller, Get, Inject, Param, Post, Res } from '@nestjs/common';
import type { GatewayConfig } from '@dossier/config';
import { pendingBody, successBody } from '@dossier/contracts';
import type { FastifyReply } from 'fastify';
import { CurrentAuth, type AuthContext } from '../auth/auth-context';
import { GATEWAY_CONFIG } from '../infra/tokens';
import { creditHeaders } from '../http/error-envelope';
import { ApiDoc, type ApiDocOptions } from '../openapi/api-doc.decorator';
import { LookupCtx } from './lookup-call.decorator';
import type { LookupOutcome } from './lookup-outcome';
import { companyLookup, emailLookup, personLookup, phoneLookup, screenLookup, searchLookup } from './lookup-requests';
import { LookupsService, type AnyLookupRequest, type LookupCall } from './lookups.service';
import { sandboxExamples } from './sandbox-examples';
import {
  anySuccessEnvelope,
  companyBody,
  companySuccessEnvelope,
  emailSuccessEnvelope,
  pendingEnvelope,
  personBody,
  screenBody,
  screenSuccessEnvelope,
  personSuccessEnvelope,
  phoneSuccessEnvelope,
  searchBody,
  usernameSitesResponse,
  verifyEmailBody,
  verifyPhoneBody,
  type UsernameSitesResponse,
} from './lookups.schema';
import { UsernameSitesService } from './username-sites.service';

const lookupDoc = (
  summary: string,
  body: ApiDocOptions['body'],
  response: ApiDocOptions['response'],
  description: string,
  bodyExamples?: ApiDocOptions['bodyExamples'],
): ApiDocOptions => ({
  tag: 'lookups',
  summary,
  description,
  body,
  ...(bodyExamples ? { bodyExamples } : {}),
  lookup: true,
  status: 200,
  response,
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

/**
 * The lookup endpoints. Each handler maps its body onto a lookup (lookup-requests.ts); every one then
 * takes the same path: `LookupsService.submit` → `respond`. Failures are thrown and answered by the
 * one error filter.
 */
@Controller('v1')
export class LookupsController {
  constructor(
    private readonly lookups: LookupsService,
    private readonly sites: UsernameSitesService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  @Post('search')
  @ApiDoc(
    lookupDoc(
      'Generic search',
      searchBody,
      anySuccessEnvelope,
      '`type` routes to a lookup with `query` as one of its fields. person: `@handle` → username, an e-mail ' +
        'address → email, a phone number (digits with an optional leading +, spaces, ( ) - . /; a national one ' +
        "read in the region of `country`, else the operator's default region) → phone, anything else → name. " +
        'company: a registration number (at least four digits, after at most three letters: `SC012345`, ' +
        '`HRB 12345`) → registration_number, a domain or a URL on one → domain, anything else → company_name. ' +
        'email → email, phone → phone (with `country` as default region), username → a person search by ' +
        'username (`sites`, `tags` and `top` choose its sites, as on the person search). Errors name `query`; ' +
        '`matched_on` names the field it went to.',
    ),
  )
  search(@Body() raw: unknown, @LookupCtx() call: LookupCall, @Res() res: FastifyReply): Promise<void> {
    return this.run(searchLookup(raw, this.config.defaultRegion), call, res);
  }

  @Post('search/person')
  @ApiDoc(
    lookupDoc(
      'Person search',
      personBody,
      personSuccessEnvelope,
      'At least one of name, email, phone, username. `phone` in any format: a national number is read in the ' +
        "region of `country`, else of the country `location` names, else the operator's default region. " +
        'Results carry match_score and matched_on, best first. With `username`, every site of ' +
        '`GET /v1/username/sites` is checked for a profile (one `sources` entry `site:<Name>` each, counted in ' +
        '`source_summary`) unless `sites`, `tags` or `top` choose; the check answers within the wait, the sites ' +
        'not done `timeout`, and a pending search shows the accounts found so far in `progress`.',
      sandboxExamples('person'),
    ),
  )
  person(@Body() raw: unknown, @LookupCtx() call: LookupCall, @Res() res: FastifyReply): Promise<void> {
    return this.run(personLookup(raw, this.config.defaultRegion), call, res);
  }

  @Post('search/company')
  @ApiDoc(
    lookupDoc(
      'Company search',
      companyBody,
      companySuccessEnvelope,
      'At least one of company_name, domain, registration_number.',
      sandboxExamples('company'),
    ),
  )
  company(@Body() raw: unknown, @LookupCtx() call: LookupCall, @Res() res: FastifyReply): Promise<void> {
    return this.run(companyLookup(raw), call, res);
  }

  @Post('screen')
  @ApiDoc(
    lookupDoc(
      'Sanctions screening',
      screenBody,
      screenSuccessEnvelope,
      'Screens a name against the sanctions lists the operator imported (OFAC SDN, UN Security Council, EU, UK, ' +
        'OpenSanctions): one result per listed person (or organisation, with `type: company`) whose names match, ' +
        'each with its `watchlist_hits` — list, entry id, listed name, programme, `match_score` (the local ' +
        "search's name matcher: nicknames, transliteration, word order; a hit scores 0.85 or more) and " +
        '`matched_on`. A person search and a company search screen their results the same way. Costs what a ' +
        'lookup of its kind costs, charged only when it found a listed entity; `sources` says `skipped` while ' +
        'no list is imported. Suppression never hides a hit.',
    ),
  )
  screen(@Body() raw: unknown, @LookupCtx() call: LookupCall, @Res() res: FastifyReply): Promise<void> {
    return this.run(screenLookup(raw), call, res);
  }

  @Post('verify/email')
  @ApiDoc(
    lookupDoc(
      'Verify an e-mail address',
      verifyEmailBody,
      emailSuccessEnvelope,
      'Always one result describing the address. `deliverability`: `undeliverable` (bad syntax; a domain that ' +
        'does not exist, has a null MX or no mail host; a mailbox its server refuses or says is disabled), `risky` (a disposable domain, ' +
        'a role address, a full mailbox, a catch-all domain), `deliverable` only when the mailbox server accepted ' +
        'the address (the SMTP probe, opt-in), else `unknown` (DNS or the server could not tell, or no probe ran); ' +
        "`reason` says why, `sub_status` as a code, and `score` (0–100) is that code's. `is_catch_all`, `has_full_inbox`, " +
        "`is_disabled` and `can_connect_smtp` are the probe's findings, `null` when it did not run or could not tell. " +
        'Charged when a source found something: nothing is charged when every source could not tell.',
      sandboxExamples('email'),
    ),
  )
  email(@Body() raw: unknown, @LookupCtx() call: LookupCall, @Res() res: FastifyReply): Promise<void> {
    return this.run(emailLookup(raw), call, res);
  }

  @Post('verify/phone')
  @ApiDoc(
    lookupDoc(
      'Look up a phone number',
      verifyPhoneBody,
      phoneSuccessEnvelope,
      'Validity, line type, original carrier, location and time zones from libphonenumber. Unparseable input is 400; a parseable but invalid number is a result with valid: false.',
      sandboxExamples('phone'),
    ),
  )
  phone(@Body() raw: unknown, @LookupCtx() call: LookupCall, @Res() res: FastifyReply): Promise<void> {
    return this.run(phoneLookup(raw), call, res);
  }

  @Get('searches/:id')
  @ApiDoc({
    tag: 'lookups',
    summary: 'A search by id',
    description:
      'The same envelope as the lookup: `status: "pending"` (202) while it runs, the error envelope if it failed. Only the account that ran it can see it.',
    status: 200,
    response: anySuccessEnvelope,
    alternatives: [{ status: 202, description: 'Still running', response: pendingEnvelope }],
    credits: true,
    pathParams: { id: 'search id (srch_…)' },
    errors: ['unauthorized', 'not_found', 'rate_limited', 'unavailable'],
  })
  async getSearch(@Param('id') id: string, @CurrentAuth() auth: AuthContext, @Res() res: FastifyReply): Promise<void> {
    respond(res, await this.lookups.get(id, auth));
  }

  @Get('username/sites')
  @ApiDoc({
    tag: 'lookups',
    summary: 'The sites a username search checks',
    description:
      'The sites username presence checks (a person search with `username`, or `POST /v1/search` with `type: ' +
      'username`), as the person workers report them: what `sites`, `tags` and `top` choose from. By default a ' +
      'search checks every one. Costs nothing. `503` while no person worker runs.',
    status: 200,
    response: usernameSitesResponse,
    errors: ['unauthorized', 'rate_limited', 'unavailable'],
  })
  async usernameSites(): Promise<UsernameSitesResponse> {
    const report = await this.sites.list();
    const carried = new Map<string, number>();
    for (const site of report.sites) for (const tag of site.tags) carried.set(tag, (carried.get(tag) ?? 0) + 1);
    return {
      status: 'success',
      sites: report.sites,
      tags: [...carried]
        .sort(([a, m], [b, n]) => n - m || (a < b ? -1 : a > b ? 1 : 0))
        .map(([tag, sites]) => ({ tag, sites })),
    };
  }

  private async run(lookup: AnyLookupRequest, call: LookupCall, res: FastifyReply): Promise<void> {
    const outcome = await this.lookups.submit(lookup, call);
    if (call.prefer.respondAsync) void res.header('Preference-Applied', 'respond-async');
    respond(res, outcome);
  }
}

/** A lookup outcome as HTTP: 200 with the success envelope, or 202 pending with Location. */
function respond(res: FastifyReply, outcome: LookupOutcome): void {
  res.request.searchId = outcome.searchId;
  // A replay returns the original search and spends nothing.
  const spent = outcome.replayed ? 0 : outcome.status === 'pending' ? outcome.reserved : outcome.spent;
  void res.headers(creditHeaders(spent, outcome.balance));
  if (outcome.replayed) void res.header('Idempotent-Replayed', 'true');
  if (outcome.status === 'pending') {
    void res
      .status(202)
      .headers({ Location: `/v1/searches/${outcome.searchId}`, 'Retry-After': '1' })
      .send(pendingBody(outcome.searchId, outcome.balance, outcome.progress));
    return;
  }
  void res
    .status(200)
    .send(successBody(outcome.searchId, outcome.results, outcome.sources, outcome.balance, outcome.total));
}
