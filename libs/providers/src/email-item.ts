import { parseEmail } from '@dossier/domain';
import type { EmailResultItem } from '@dossier/contracts';

/**
 * An e-mail item as one provider sees the address: the syntax fields every e-mail provider agrees on
 * (one parser), everything it does not know left neutral (`unknown`, false, empty) for the merge, and
 * what it does know from `known`.
 */
export function emailItem(email: string, source: string, known: Partial<EmailResultItem> = {}): EmailResultItem {
  const parsed = parseEmail(email);
  return {
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
    ...known,
    sources: [source],
  };
}

/** Providers that need a well-formed address (an HTTP lookup, a probe) do not apply to a malformed one. */
export function hasValidSyntax(input: { email: string }): boolean {
  return parseEmail(input.email).syntaxValid;
}
