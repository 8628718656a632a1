/**
 * `npm run deps`: the import rules of STYLE.md, checked on every test run.
 * Dependencies point one way (apps → libs; runtime → config, contracts, domain; providers, persistence,
 * contracts → domain; domain → nothing),
 * no cycles, and nothing reaches into another lib's internals: across libs, only `libs/<name>/src/index.ts`.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'domain-depends-on-nothing',
      comment: 'libs/domain is pure: no other lib, no app, no Nest, no I/O clients',
      severity: 'error',
      from: { path: '^libs/domain/' },
      to: { path: ['^libs/(?!domain/)', '^apps/', 'node_modules/(@nestjs|typeorm|pg|ioredis|bullmq)/'] },
    },
    {
      name: 'libs-do-not-import-apps',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'no-lib-internals',
      comment: 'another lib is reached through its index (the @dossier/<name> alias) only',
      severity: 'error',
      from: { path: '^libs/([^/]+)/' },
      to: { path: '^libs/[^/]+/src/.+', pathNot: ['^libs/[^/]+/src/index\\.ts$', '^libs/$1/'] },
    },
    {
      name: 'no-lib-internals-from-apps',
      comment:
        'apps, tests and the bench reach a lib through its index (the @dossier/<name> alias) only, ' +
        'but for what an app imports before Nest (@dossier/runtime/before-nest, ADR 0030)',
      severity: 'error',
      from: { path: '^(apps|test|bench)/' },
      to: { path: '^libs/[^/]+/src/.+', pathNot: '^libs/([^/]+/src/index|runtime/src/before-nest)\\.ts$' },
    },
    {
      name: 'runtime-below-apps',
      comment:
        'libs/runtime (connections, logging, signals, internal servers, heap) stands on config, contracts and ' +
        'domain only: the apps hand it what else it opens (the database), so it never reaches persistence or providers',
      severity: 'error',
      from: { path: '^libs/runtime/' },
      to: { path: '^libs/(?!(runtime|config|contracts|domain|testing)/)' },
    },
    {
      name: 'runtime-is-for-apps',
      comment: 'the libs under the runtime (domain, contracts, persistence, providers) do not import it',
      severity: 'error',
      from: { path: '^libs/(domain|contracts|persistence|providers)/' },
      to: { path: '^libs/runtime/' },
    },
    {
      name: 'config-is-the-schema',
      comment: 'libs/config is the environment schema: it imports domain only, never the runtime built on it',
      severity: 'error',
      from: { path: '^libs/config/' },
      to: { path: '^libs/(?!(config|domain|testing)/)' },
    },
    {
      name: 'apps-stay-apart',
      comment: 'the gateway never imports worker code (and the other way round); the CLI imports neither',
      severity: 'error',
      from: { path: '^apps/([^/]+)/' },
      to: { path: '^apps/', pathNot: '^apps/$1/' },
    },
    {
      name: 'gateway-has-no-providers',
      comment: 'the gateway queues lookups; providers run in the worker',
      severity: 'error',
      from: { path: '^apps/gateway/' },
      to: { path: '^libs/providers/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^dist/|^clients/|node_modules)' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
