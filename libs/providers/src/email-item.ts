import { parseEmail } from '@dossier/domain';
import { EMAIL_SCORES, type EmailResultItem, type EmailSubStatus } from '@dossier/contracts';

/** The sub-status of a verdict that says no more than its deliverability (a vendor's, a sandbox case's). */
export const PLAIN_SUB_STATUS: Readonly<Record<EmailResultItem['deliverability'], EmailSubStatus>> = {
  deliverable: 'accepted',
  undeliverable: 'mailbox_not_found',
  risky: 'catch_all',
  unknown: 'not_probed',
};

/**
 * An e-mail item as one provider sees the address: the syntax fields every e-mail provider agrees on
 * (one parser), everything it does not know left neutral (`unknown`, false, null, empty) for the merge, and
 * what it does know from `known`; the `score` always that of its `sub_status` (EMAIL_SCORES, ADR 0057).
 */
export function emailItem(
  email: string,
  source: string,
  known: Partial<Omit<EmailResultItem, 'score'>> = {},
): EmailResultItem {
  const parsed = parseEmail(email);
  const item: Omit<EmailResultItem, 'score'> = {
    email,
    normalized: parsed.normalized,
    syntax_valid: parsed.syntaxValid,
    domain: parsed.domain,
    mx_records: [],
    deliverability: 'unknown',
    reason: null,
    disposable: false,
    free_provider: false,
    role_account: false,
    did_you_mean: null,
    accounts: [],
    is_catch_all: null,
    has_full_inbox: null,
    is_disabled: null,
    can_connect_smtp: null,
    sub_status: PLAIN_SUB_STATUS[known.deliverability ?? 'unknown'],
    ...known,
    sources: [source],
  };
  return { ...item, score: EMAIL_SCORES[item.sub_status] };
}

/** Providers that need a well-formed address (an HTTP lookup, a probe) do not apply to a malformed one. */
export function hasValidSyntax(input: { email: string }): boolean {
  return parseEmail(input.email).syntaxValid;
}
