/**
 * What every process the tests start runs with, so that no provider ever leaves loopback: keyless network
 * providers off (a test that needs one points it at a fake on 127.0.0.1), DNS at a loopback port where
 * nothing answers. Licensed providers are off anyway until a key is set. The provider contract test
 * checks this list covers every network provider.
 */
export const LOOPBACK_PROVIDER_ENV: Readonly<Record<string, string>> = {
  GRAVATAR_ENABLED: 'false',
  DNS_SERVERS: '127.0.0.1:9',
};
