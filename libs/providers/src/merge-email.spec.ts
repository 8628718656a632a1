import { parseEmail } from '@dossier/domain';
import type { EmailResultItem } from '@dossier/contracts';
import { addressFacts, checkedEmailItem, type MailboxProbe } from './email-checks';
import { emailItem } from './email-item';
import type { MailRoute } from './mail-host';
import { mergeItems } from './merge';

// The providers' precedences: smtp 20, email 10, gravatar 0, hunter -10.
const MX: MailRoute = { kind: 'mx', hosts: [{ host: 'mx1.acme.example', preference: 10 }] };

function checked(address: string, source: 'email' | 'smtp', probe?: MailboxProbe): EmailResultItem {
  const parsed = parseEmail(address);
  return checkedEmailItem(address, source, { parsed, facts: addressFacts(parsed), route: MX, probe });
}

function merge(...items: [number, EmailResultItem][]): EmailResultItem {
  return mergeItems(
    'email',
    items.map(([precedence, item]) => ({ precedence, items: [item] })),
  )[0]!;
}

const hunterCatchAll = emailItem('grace@acme.example', 'hunter', {
  deliverability: 'risky',
  reason: 'Hunter: accept_all (score 70)',
  is_catch_all: true,
  can_connect_smtp: true,
  sub_status: 'catch_all',
});

describe('mergeEmail: the mailbox facts, sub_status and score (ADR 0057)', () => {
  it("takes the probe's facts over a vendor's: a domain the probe found no catch-all stays so", () => {
    const accepted = checked('grace@acme.example', 'smtp', { result: 'accepted', reason: 'ok', catchAll: false });
    const item = merge([20, accepted], [10, checked('grace@acme.example', 'email')], [-10, hunterCatchAll]);
    expect(item).toMatchObject({
      deliverability: 'deliverable',
      sub_status: 'accepted',
      score: 95,
      is_catch_all: false,
      has_full_inbox: false,
      is_disabled: false,
      can_connect_smtp: true,
      sources: ['smtp', 'email', 'hunter'],
    });
  });

  it("fills in a vendor's facts where no probe ran, its sub-status with its verdict", () => {
    const item = merge([10, checked('grace@acme.example', 'email')], [-10, hunterCatchAll]);
    expect(item).toMatchObject({
      deliverability: 'risky',
      sub_status: 'catch_all',
      score: 50,
      is_catch_all: true,
      has_full_inbox: null,
      is_disabled: null,
      can_connect_smtp: true,
    });
  });

  it('leaves unknown facts null, the sub-status that of the highest precedence when none could tell', () => {
    const gravatar = emailItem('grace@acme.example', 'gravatar', { accounts: [] });
    const item = merge([10, checked('grace@acme.example', 'email')], [0, gravatar]);
    expect(item).toMatchObject({
      deliverability: 'unknown',
      sub_status: 'not_probed',
      score: 40,
      is_catch_all: null,
      has_full_inbox: null,
      is_disabled: null,
      can_connect_smtp: null,
    });
    const unreachable = checked('grace@acme.example', 'smtp', {
      result: 'inconclusive',
      reason: 'could not connect',
      noSession: true,
    });
    expect(merge([20, unreachable], [10, checked('grace@acme.example', 'email')])).toMatchObject({
      deliverability: 'unknown',
      sub_status: 'smtp_unreachable',
      score: 30,
      can_connect_smtp: false,
    });
  });

  it('gives the sub-status and score of the verdict that wins, the facts of whoever knows them', () => {
    const greylisted = checked('info@acme.example', 'smtp', { result: 'inconclusive', reason: 'greylisted' });
    // The probe could not tell, so the role verdict (`email`; the probe's own item says it too) stands.
    const item = merge([20, greylisted], [10, checked('info@acme.example', 'email')]);
    expect(item).toMatchObject({ deliverability: 'risky', sub_status: 'role_account', score: 70 });
    expect(item.can_connect_smtp).toBe(true);
    const disabled = checked('grace@acme.example', 'smtp', { result: 'disabled', reason: 'disabled' });
    expect(merge([20, disabled], [-10, hunterCatchAll])).toMatchObject({
      deliverability: 'undeliverable',
      sub_status: 'mailbox_disabled',
      score: 0,
      is_disabled: true,
      is_catch_all: true,
    });
  });
});
