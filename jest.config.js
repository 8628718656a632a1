/**
 * Jest runs the code as ES modules (Nest 12 and some of its dependencies are ESM-only): ts-jest emits
 * ESM and `npm test` starts node with --experimental-vm-modules. See docs/adr/0009-node-22-and-tests-as-esm.md.
 * @type {import('jest').Config}
 */
const aliases = ['domain', 'contracts', 'providers', 'persistence', 'config', 'runtime', 'testing'];

module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  testMatch: [
    '<rootDir>/{apps,libs}/**/*.spec.ts',
    '<rootDir>/{apps,libs}/**/*.int-spec.ts',
    '<rootDir>/test/**/*.e2e-spec.ts',
  ],
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json', useESM: true, diagnostics: false }],
  },
  moduleNameMapper: {
    ...Object.fromEntries(aliases.map((a) => [`^@dossier/${a}$`, `<rootDir>/libs/${a}/src/index.ts`])),
    '^@dossier/runtime/before-nest$': '<rootDir>/libs/runtime/src/before-nest.ts',
  },
  globalSetup: '<rootDir>/libs/testing/src/global-setup.ts',
  globalTeardown: '<rootDir>/libs/testing/src/global-teardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
  // A worker that holds more than this once a suite ends is replaced: the modules every suite loads anew under
  // --experimental-vm-modules are not all freed, and one process running every unit and integration suite
  // reached Node's 4 GiB heap limit (scripts/test.mjs runs each lane in one such worker).
  workerIdleMemoryLimit: '1536MB',
};
