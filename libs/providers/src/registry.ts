import type { ApiKeyMode, LookupKind } from '@dossier/domain';
import type { Provider } from './provider';
import { libphonenumberProvider } from './libphonenumber/libphonenumber.provider';
import { emailProvider } from './email/email.provider';
import { smtpProvider } from './smtp/smtp.provider';
import { gravatarProvider } from './gravatar/gravatar.provider';
import { twilioProvider } from './twilio/twilio.provider';
import { hunterProvider } from './hunter/hunter.provider';
import { usernameProvider } from './username/username.provider';
import { localProvider } from './local/local.provider';
import { gleifProvider } from './gleif/gleif.provider';
import { companiesHouseProvider } from './companies-house/companies-house.provider';
import { opencorporatesProvider } from './opencorporates/opencorporates.provider';
import { pdlProvider } from './pdl/pdl.provider';
import { sandboxProvider } from './sandbox/sandbox.provider';
import { watchlistsProvider } from './watchlists/watchlists.provider';

/**
 * THE list of providers. Adding one is its folder plus one line here — nothing else.
 * Order matters only for display: fan-out runs them in parallel.
 */
export const PROVIDERS: readonly Provider[] = [
  libphonenumberProvider as Provider,
  emailProvider as Provider,
  smtpProvider as Provider,
  gravatarProvider as Provider,
  twilioProvider as Provider,
  hunterProvider as Provider,
  usernameProvider as Provider,
  localProvider as Provider,
  gleifProvider as Provider,
  companiesHouseProvider as Provider,
  opencorporatesProvider as Provider,
  pdlProvider as Provider,
  watchlistsProvider as Provider,
  sandboxProvider,
];

/**
 * The providers a lookup of this kind fans out to: for a live lookup every provider but the sandbox;
 * for a test key's (`mode: 'test'`) the sandbox alone (ADR 0021).
 */
export function providersFor<K extends LookupKind>(
  kind: K,
  registry: readonly Provider[] = PROVIDERS,
  mode: ApiKeyMode = 'live',
): Provider<K>[] {
  return registry.filter(
    (p) => (p.kinds as readonly LookupKind[]).includes(kind) && (p.sandbox === true) === (mode === 'test'),
  ) as unknown as Provider<K>[];
}
