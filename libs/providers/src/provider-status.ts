import type { ProviderStatus } from '@dossier/contracts';
import type { Provider } from './provider';

/**
 * The status of `providers` under `settings`: `isConfigured` says on or off; each one on with a `checkReach`
 * is checked, all at once, each within `budgetMs`. Resolves once every check is done.
 */
export async function providerStatus(
  providers: readonly Provider[],
  settings: Readonly<Record<string, string | undefined>>,
  budgetMs: number,
): Promise<ProviderStatus> {
  const status: ProviderStatus = { on: [], off: {}, unreachable: {} };
  const checks = providers.map(async (provider) => {
    const configured = configuredOf(provider, settings);
    if (configured !== true) {
      status.off[provider.id] = configured;
      return;
    }
    const reach = provider.checkReach ? await reachOf(provider, settings, budgetMs) : true;
    if (reach === true) status.on.push(provider.id);
    else status.unreachable[provider.id] = reach;
  });
  await Promise.all(checks);
  // In the order they were given, whatever order the checks ended in.
  const order = (id: string): number => providers.findIndex((p) => p.id === id);
  status.on.sort((a, b) => order(a) - order(b));
  status.unreachable = Object.fromEntries(Object.entries(status.unreachable).sort(([a], [b]) => order(a) - order(b)));
  return status;
}

function configuredOf(provider: Provider, settings: Readonly<Record<string, string | undefined>>): true | string {
  try {
    return provider.isConfigured(settings);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

async function reachOf(
  provider: Provider,
  settings: Readonly<Record<string, string | undefined>>,
  budgetMs: number,
): Promise<true | string> {
  const signal = AbortSignal.timeout(budgetMs);
  try {
    return (await provider.checkReach?.(settings, signal)) ?? true;
  } catch (error) {
    if (signal.aborted) return `no answer within ${budgetMs} ms`;
    return `the check failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}
