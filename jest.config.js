/** @type {import('jest').Config} */
const aliases = ['domain', 'contracts', 'providers', 'persistence', 'config', 'testing'];

module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/{apps,libs}/**/*.spec.ts', '<rootDir>/{apps,libs}/**/*.int-spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json', diagnostics: false }],
  },
  moduleNameMapper: Object.fromEntries(aliases.map((a) => [`^@dossier/${a}$`, `<rootDir>/libs/${a}/src`])),
  globalSetup: '<rootDir>/libs/testing/src/global-setup.ts',
  globalTeardown: '<rootDir>/libs/testing/src/global-teardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
};
