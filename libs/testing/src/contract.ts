/**
 * Result item fields exactly as API.md lists them, written out from the contract rather than imported
 * from the code, so the tests catch the code drifting from the contract.
 */
export const API_RESULT_FIELDS = {
  PersonResult: [
    'id',
    'full_name',
    'first_name',
    'last_name',
    'aliases',
    'emails',
    'phones',
    'usernames',
    'accounts',
    'locations',
    'age',
    'birth_year',
    'match_score',
    'matched_on',
    'sources',
    // Additions of ADR 0046: which records joined the item and why, and what it was kept apart from.
    'linked_by',
    'kept_apart',
  ],
  CompanyResult: [
    'id',
    'name',
    'registration_number',
    'jurisdiction',
    'country',
    'domain',
    'status',
    'incorporated_on',
    'address',
    'industry',
    'match_score',
    'matched_on',
    'sources',
    // Additions of ADR 0066: officers, persons with significant control, parents, each fact with its source.
    'officers',
    'controllers',
    'parents',
    // Addition of ADR 0068: the provider and upstream record of each field's value.
    'field_sources',
  ],
  EmailResult: [
    'email',
    'normalized',
    'syntax_valid',
    'domain',
    'mx_records',
    'deliverability',
    'reason',
    'disposable',
    'free_provider',
    'role_account',
    'did_you_mean',
    'accounts',
    'sources',
    // Additions of ADR 0057: the SMTP probe's mailbox facts, a score and a sub-status.
    'is_catch_all',
    'has_full_inbox',
    'is_disabled',
    'can_connect_smtp',
    'score',
    'sub_status',
  ],
  PhoneResult: [
    'input',
    'e164',
    'valid',
    'possible',
    'country_code',
    'region',
    'location',
    'carrier',
    'line_type',
    'time_zones',
    'national_format',
    'international_format',
    'sources',
    // Addition of ADR 0056: why a number is not valid (Twilio Lookup v2's vocabulary).
    'validation_errors',
  ],
};

/**
 * Fields a result item has only sometimes, beside API_RESULT_FIELDS: `watchlist_hits` on a person or company item
 * that was screened against the sanctions lists (ADR 0064; absent: not screened).
 */
export const API_OPTIONAL_RESULT_FIELDS: Partial<Record<keyof typeof API_RESULT_FIELDS, readonly string[]>> = {
  PersonResult: ['watchlist_hits'],
  CompanyResult: ['watchlist_hits'],
};
