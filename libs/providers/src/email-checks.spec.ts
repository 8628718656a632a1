import { parseEmail } from '@dossier/domain';
import { addressFacts, checkedEmailItem, verdictOf, type EmailChecks, type MailboxProbe } from './email-checks';
import type { MailRoute } from './mail-host';

describe('addressFacts', () => {
  const facts = (address: string) => addressFacts(parseEmail(address));

  it('marks disposable domains, and subdomains of the wildcard ones', () => {
    expect(facts('x@mailinator.com').disposable).toBe(true);
    expect(facts('x@anything.33m.co').disposable).toBe(true);
    expect(facts('x@acme-corp.example').disposable).toBe(false);
  });

  it('marks free mailbox providers from the full list', () => {
    expect(facts('x@gmail.com').free_provider).toBe(true);
    expect(facts('x@gmx.de').free_provider).toBe(true);
    expect(facts('x@acme-corp.example').free_provider).toBe(false);
  });

  it.each(['info', 'Admin', 'support', 'noreply', 'no-reply', 'sales', 'postmaster', 'info+newsletter'])(
    'marks %j as a role address',
    (local) => {
      expect(facts(`${local}@acme-corp.example`).role_account).toBe(true);
    },
  );

  it('does not mark a person as a role', () => {
    expect(facts('grace.hopper@acme-corp.example').role_account).toBe(false);
  });

  // role-based-email-addresses lists a few people's names among its roles: a given name (Per, Alexa) and a
  // surname (Gardner) are a person's mailbox far more often than a function's.
  it.each(['per', 'Alexa', 'gardner'])('does not mark %j, a name people have, as a role address', (local) => {
    expect(facts(`${local}@acme-corp.example`).role_account).toBe(false);
  });

  // What the established verifiers (Reacher, AfterShip's email-verifier) count as roles too: a shared inbox
  // (`hello@`, `team@`), a department (`it@`) or a placeholder (`user@`), not a person.
  it.each(['hello', 'team', 'it', 'user'])('still marks %j as a role address', (local) => {
    expect(facts(`${local}@acme-corp.example`).role_account).toBe(true);
  });

  it.each([
    ['Grace@gmial.com', 'Grace@gmail.com'],
    ['grace@gmail.con', 'grace@gmail.com'],
    ['grace@yahooo.com', 'grace@yahoo.com'],
    ['grace@hotmial.com', 'grace@hotmail.com'],
    ['grace@iclod.com', 'grace@icloud.com'],
  ])('suggests the common provider %j was meant to be: %j', (address, suggestion) => {
    expect(facts(address).did_you_mean).toBe(suggestion);
  });

  it.each(['grace@gmx.net', 'grace@fastmail.fm', 'grace@acmecorp.pt', 'grace@acme.ac.uk', 'grace@acmecorp.com.br'])(
    'suggests nothing for %j (a common provider itself, or a real country domain)',
    (address) => {
      expect(facts(address).did_you_mean).toBeNull();
    },
  );

  // A short domain is a few edits from some provider: IBM's is two from aim.com, GE's one from me.com.
  it.each([
    ['grace@acme.com', 'me.com'],
    ['grace@ibm.com', 'aim.com'],
    ['grace@hp.com', 'qq.com'],
    ['grace@att.com', 'aol.com'],
    ['grace@meta.com', 'me.com'],
    ['grace@nike.com', 'live.com'],
    ['grace@arm.com', 'aim.com'],
    ['grace@ey.com', 'hey.com'],
    ['grace@ge.com', 'me.com'],
    ['grace@gm.com', 'pm.com'],
  ])('suggests nothing for a company domain %j, however close to %s', (address) => {
    expect(facts(address).did_you_mean).toBeNull();
  });

  it('says nothing about a malformed address', () => {
    expect(facts('not an address@gmial.com')).toEqual({
      disposable: false,
      free_provider: false,
      role_account: false,
      did_you_mean: null,
    });
  });
});

describe('verdictOf: the first rule that applies wins', () => {
  const MX: MailRoute = { kind: 'mx', hosts: [{ host: 'mx1.acme.example', preference: 10 }] };
  const probe = (result: MailboxProbe['result']): MailboxProbe => ({ result, reason: `the probe said ${result}` });
  const checks = (address: string, more: Partial<EmailChecks> = {}): EmailChecks => {
    const parsed = parseEmail(address);
    return { parsed, facts: addressFacts(parsed), route: MX, ...more };
  };

  it.each<[string, EmailChecks, string, string]>([
    ['bad syntax', checks('grace@@acme.example', { route: undefined }), 'undeliverable', 'the address has a character'],
    ['NXDOMAIN', checks('grace@acme.example', { route: { kind: 'no-domain' } }), 'undeliverable', 'does not exist'],
    ['a null MX', checks('grace@acme.example', { route: { kind: 'null-mx' } }), 'undeliverable', 'null MX'],
    [
      'no mail host',
      checks('grace@acme.example', { route: { kind: 'no-mail-host' } }),
      'undeliverable',
      'no mail host',
    ],
    [
      'a refused mailbox, even a role',
      checks('info@acme.example', { probe: probe('rejected') }),
      'undeliverable',
      'rejected',
    ],
    ['a disposable domain', checks('grace@mailinator.com', { probe: probe('accepted') }), 'risky', 'disposable'],
    ['a full mailbox', checks('grace@acme.example', { probe: probe('full') }), 'risky', 'full'],
    ['a catch-all domain', checks('grace@acme.example', { probe: probe('catch-all') }), 'risky', 'catch-all'],
    ['a role the server accepts', checks('info@acme.example', { probe: probe('accepted') }), 'risky', 'role address'],
    [
      'a role when DNS failed',
      checks('info@acme.example', { route: { kind: 'dns-failure', detail: 'x' } }),
      'risky',
      'role',
    ],
    ['an accepted mailbox', checks('grace@acme.example', { probe: probe('accepted') }), 'deliverable', 'accepted'],
    [
      'DNS that could not tell',
      checks('grace@acme.example', { route: { kind: 'dns-failure', detail: 'SERVFAIL' } }),
      'unknown',
      'DNS could not tell: SERVFAIL',
    ],
    [
      'a probe that could not tell',
      checks('grace@acme.example', { probe: probe('inconclusive') }),
      'unknown',
      'inconclusive',
    ],
    ['a mail host and no probe', checks('grace@acme.example'), 'unknown', 'has a mail host (mx1.acme.example)'],
  ])('%s', (_name, input, deliverability, reason) => {
    const verdict = verdictOf(input);
    expect(verdict.deliverability).toBe(deliverability);
    expect(verdict.reason).toContain(reason);
  });
});

describe('checkedEmailItem: sub_status, score and the probe facts (ADR 0057)', () => {
  const MX: MailRoute = { kind: 'mx', hosts: [{ host: 'mx1.acme.example', preference: 10 }] };
  const probe = (result: MailboxProbe['result'], more: Partial<MailboxProbe> = {}): MailboxProbe => ({
    result,
    reason: `the probe said ${result}`,
    ...more,
  });
  const item = (address: string, more: Partial<EmailChecks> = {}) => {
    const parsed = parseEmail(address);
    return checkedEmailItem(address, 'smtp', { parsed, facts: addressFacts(parsed), route: MX, ...more });
  };
  const grade = (i: ReturnType<typeof item>) => ({
    deliverability: i.deliverability,
    sub_status: i.sub_status,
    score: i.score,
    is_catch_all: i.is_catch_all,
    has_full_inbox: i.has_full_inbox,
    is_disabled: i.is_disabled,
    can_connect_smtp: i.can_connect_smtp,
  });
  // deliverability, sub_status, score, is_catch_all, has_full_inbox, is_disabled, can_connect_smtp
  type Row = [string, ReturnType<typeof item>, string, string, number, ...(boolean | null)[]];

  it.each<Row>([
    [
      'bad syntax',
      item('grace@@acme.example', { route: undefined }),
      'undeliverable',
      'invalid_syntax',
      0,
      null,
      null,
      null,
      null,
    ],
    [
      'NXDOMAIN',
      item('grace@acme.example', { route: { kind: 'no-domain' } }),
      'undeliverable',
      'no_domain',
      0,
      null,
      null,
      null,
      null,
    ],
    [
      'a null MX',
      item('grace@acme.example', { route: { kind: 'null-mx' } }),
      'undeliverable',
      'no_mail_host',
      0,
      null,
      null,
      null,
      null,
    ],
    [
      'a refused mailbox',
      item('grace@acme.example', { probe: probe('rejected') }),
      'undeliverable',
      'mailbox_not_found',
      0,
      null,
      false,
      false,
      true,
    ],
    [
      'a disabled mailbox',
      item('grace@acme.example', { probe: probe('disabled') }),
      'undeliverable',
      'mailbox_disabled',
      0,
      null,
      false,
      true,
      true,
    ],
    [
      'a disabled role mailbox',
      item('info@acme.example', { probe: probe('disabled') }),
      'undeliverable',
      'mailbox_disabled',
      0,
      null,
      false,
      true,
      true,
    ],
    [
      'a disposable domain',
      item('grace@mailinator.com', { probe: probe('accepted', { catchAll: false }) }),
      'risky',
      'disposable',
      20,
      false,
      false,
      false,
      true,
    ],
    [
      'a full mailbox',
      item('grace@acme.example', { probe: probe('full') }),
      'risky',
      'mailbox_full',
      30,
      null,
      true,
      false,
      true,
    ],
    [
      'a catch-all domain',
      item('grace@acme.example', { probe: probe('catch-all') }),
      'risky',
      'catch_all',
      50,
      true,
      false,
      false,
      true,
    ],
    [
      'a role the server accepts',
      item('info@acme.example', { probe: probe('accepted', { catchAll: false }) }),
      'risky',
      'role_account',
      70,
      false,
      false,
      false,
      true,
    ],
    [
      'an accepted mailbox, the domain no catch-all',
      item('grace@acme.example', { probe: probe('accepted', { catchAll: false }) }),
      'deliverable',
      'accepted',
      95,
      false,
      false,
      false,
      true,
    ],
    [
      'an accepted mailbox, the catch-all check failed',
      item('grace@acme.example', { probe: probe('accepted') }),
      'deliverable',
      'accepted',
      95,
      null,
      false,
      false,
      true,
    ],
    [
      'DNS that could not tell',
      item('grace@acme.example', { route: { kind: 'dns-failure', detail: 'SERVFAIL' } }),
      'unknown',
      'dns_failure',
      10,
      null,
      null,
      null,
      null,
    ],
    [
      'no host held a session',
      item('grace@acme.example', { probe: probe('inconclusive', { noSession: true }) }),
      'unknown',
      'smtp_unreachable',
      30,
      null,
      null,
      null,
      false,
    ],
    [
      'a probe that could not tell (greylisted)',
      item('grace@acme.example', { probe: probe('inconclusive') }),
      'unknown',
      'inconclusive',
      40,
      null,
      null,
      null,
      true,
    ],
    ['a mail host and no probe', item('grace@acme.example'), 'unknown', 'not_probed', 40, null, null, null, null],
  ])('%s', (_name, actual, deliverability, sub_status, score, catchAll, full, disabled, connect) => {
    expect(grade(actual)).toEqual({
      deliverability,
      sub_status,
      score,
      is_catch_all: catchAll,
      has_full_inbox: full,
      is_disabled: disabled,
      can_connect_smtp: connect,
    });
  });
});
