// @ts-check
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'clients/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      eqeqeq: ['error', 'always'],
      'no-empty': ['error', { allowEmptyCatch: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // No imports into another lib's internals: go through its index (@dossier/<lib>). The one
      // exception is what an app's main imports before Nest, without the rest of the lib (ADR 0030).
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@dossier/*/*', '!@dossier/runtime/before-nest', '**/libs/*/src/*', '../../libs/**'],
              message: 'import a lib through @dossier/<lib>',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['libs/testing/src/global-*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
);
