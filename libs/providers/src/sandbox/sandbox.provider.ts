import { companyRowOf, memoryLocalIndex, personRowOf, type LookupKind } from '@dossier/domain';
import {
  SANDBOX_CASES,
  SANDBOX_COMPANIES,
  SANDBOX_PEOPLE,
  SANDBOX_SOURCE,
  SANDBOX_UNLISTED,
  type CompanyInput,
  type EmailInput,
  type PersonInput,
  type PhoneInput,
  type ResultItemByKind,
} from '@dossier/contracts';
import { emailItem } from '../email-item';
import { deadlinePassed, type Provider, type ProviderAnswer, type ProviderContext } from '../provider';
import { numberFields, parsePhoneInput, verdictOf } from '../phone-input';
import { localProvider } from '../local/local.provider';
import { creditedTo } from '../field-sources';

const SANDBOX = SANDBOX_SOURCE;

/** What a phone or e-mail input is matched on: the parsed number, the address ignoring case and surrounding blanks. */
function keyOf(kind: 'phone' | 'email', input: PhoneInput | EmailInput): string | null {
  if (kind === 'phone') return parsePhoneInput(input as PhoneInput).number;
  return (input as EmailInput).email.trim().toLowerCase() || null;
}

/**
 * The listed phone and e-mail items by input; the documented examples of an unlisted input are answered as any
 * other one.
 */
const ANSWERS = new Map(
  SANDBOX_CASES.flatMap((c) =>
    (c.kind === 'phone' || c.kind === 'email') && c.outcome !== 'unknown'
      ? [[`${c.kind}:${keyOf(c.kind, c.body as PhoneInput | EmailInput)}`, c.items] as const]
      : [],
  ),
);

/**
 * The synthetic people and companies as the live local index holds records: rows made as the importer makes
 * them, searched with the filters its SQL applies (memoryLocalIndex).
 */
const INDEX = memoryLocalIndex(
  SANDBOX_PEOPLE.map((record) => personRowOf(record)),
  SANDBOX_COMPANIES.map(companyRowOf),
);

/** A phone or e-mail item as listed, echoing the input as written, as the live phone and e-mail results do. */
function echo(kind: 'phone' | 'email', input: PhoneInput | EmailInput, item: ResultItemByKind['phone' | 'email']) {
  if (kind === 'phone') return { ...item, input: (input as PhoneInput).phone };
  return { ...item, email: (input as EmailInput).email };
}

/**
 * The one item a phone or e-mail lookup always answers (API.md), for an input the data set does not list:
 * what the input itself shows (the number's forms and validity, the address's syntax), nothing known about it.
 */
function unlisted(kind: 'phone' | 'email', input: PhoneInput | EmailInput): ResultItemByKind['phone' | 'email'] {
  if (kind === 'phone') {
    const phone = input as PhoneInput;
    const parsed = parsePhoneInput(phone);
    return {
      input: phone.phone,
      ...numberFields(parsed),
      ...verdictOf(parsed, parsed.isValid()),
      location: null,
      carrier: null,
      line_type: 'unknown',
      time_zones: [],
      sources: [SANDBOX],
    };
  }
  return emailItem((input as EmailInput).email, SANDBOX, { reason: SANDBOX_UNLISTED });
}

/**
 * A phone or e-mail answer: the listed items (copies: the fan-out and the merge may annotate them), else the one
 * built from the input.
 */
function checkAnswer(kind: 'phone' | 'email', input: PhoneInput | EmailInput): ProviderAnswer<'phone' | 'email'> {
  const listed = ANSWERS.get(`${kind}:${keyOf(kind, input)}`);
  if (!listed) return { outcome: 'unknown', items: [unlisted(kind, input)], detail: SANDBOX_UNLISTED };
  return { outcome: 'found', items: structuredClone(listed).map((item) => echo(kind, input, item)) };
}

/**
 * A person or company answer: the live `local` provider's (searchPeople, searchCompanies and their scoring)
 * over the synthetic records, each item (and each company field's record, ADR 0068) crediting the sandbox. `age` is the live one's too: this year's, by
 * the same clock.
 */
async function searchAnswer(
  kind: 'person' | 'company',
  input: PersonInput | CompanyInput,
  ctx: ProviderContext,
): Promise<ProviderAnswer<'person' | 'company'>> {
  const answer = await localProvider.lookup(kind, input, { ...ctx, localIndex: INDEX });
  return {
    ...answer,
    items: answer.items.map((item) =>
      'field_sources' in item
        ? { ...item, sources: [SANDBOX], field_sources: creditedTo(item.field_sources, SANDBOX) }
        : { ...item, sources: [SANDBOX] },
    ),
  };
}

/**
 * Test keys' only provider (ADR 0021, ADR 0045): answers every kind from the synthetic data set, offline and
 * deterministically — a listed phone number or address with its listed item, any other with the one item a live
 * key gets too (`unknown`: nothing known about it); a person or company search by the live local search over
 * the synthetic records, never the operator's (`not_found` when none matches). `sandbox: true` keeps it out of
 * live lookups (`providersFor`), and live providers out of test ones.
 */
export const sandboxProvider: Provider = {
  id: SANDBOX,
  kinds: ['person', 'company', 'email', 'phone'],
  configKeys: [],
  defaultTimeoutMs: 1000,
  transport: 'none',
  // A test key's one item for every kind: never cut at the caller's wait (it answers at once anyway).
  deadline: 'own',
  sandbox: true,
  isConfigured: () => true,
  async lookup(kind: LookupKind, input, ctx): Promise<ProviderAnswer<LookupKind>> {
    if (ctx.signal.aborted) throw deadlinePassed(SANDBOX, ctx.signal);
    if (kind === 'phone' || kind === 'email') return checkAnswer(kind, input as PhoneInput | EmailInput);
    return searchAnswer(kind, input as PersonInput | CompanyInput, ctx);
  },
};
