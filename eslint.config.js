// The linter: ESLint's and typescript-eslint's recommended rules over the TypeScript and the
// scripts; the type checker (tsc --noEmit) runs beside it, in .ci/run and `npm run typecheck`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** What Node gives every module (TypeScript files are checked by tsc instead). */
const NODE_GLOBALS = { console: 'readonly', process: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' };

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'reports/', '.stryker-tmp/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: NODE_GLOBALS },
    rules: {
      // A leading underscore marks what is unused on purpose (a parameter an interface requires, a
      // property left out of a rest copy).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // The Jenkins simulator refuses control characters in names as Jenkins does, and the terminal
    // tests strip or look for escape sequences: control characters in these expressions are meant.
    files: ['test/jenkins/simulator.ts', 'test/jenkins/terminal-output.test.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    // CommonJS on purpose: loaded with `node --require` into a process being measured.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...NODE_GLOBALS, require: 'readonly', WebAssembly: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
