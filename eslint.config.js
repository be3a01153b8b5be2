// eslint.config.js - `npm run lint` (part of `npm test`): ESLint's recommended rules, no unused
// variables, and no function longer than a screen (80 lines, blank lines and comments aside) in
// the hand-written sources. C has its own check: c_src/Makefile compiles with -Wall -Wextra -Werror.
import js from '@eslint/js';
import globals from 'globals';

export const MAX_FUNCTION_LINES = 80;

export default [
  {
    // generated (wasm glue, bundles, the toy's weights as a module) or installed
    ignores: ['web/dist/**', 'web/wasm/**', '**/node_modules/**', 'build/**', '.cache/**', 'coverage/**',
      'test-results/**', 'tmp/**', 'web/models/*/*.js', 'tests/fixtures/**/dist/**'],
  },
  js.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2025,
      sourceType: 'module',
      globals: { ...globals.browser, ...globals.node, ...globals.worker },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'no-unused-vars': ['error', { args: 'after-used', caughtErrors: 'none', ignoreRestSiblings: true }],
      // statements labelled FULL_API are dropped from the one-file embed by scripts/build-embed.js
      // (esbuild's dropLabels): the label is read by the build, never by a break or continue
      'no-unused-labels': 'off',
      'max-lines-per-function': ['error', { max: MAX_FUNCTION_LINES, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // a test file's cases are grouped in long test() bodies with subtests; the size rule is for
    // the code that ships and the scripts that build and measure it
    files: ['tests/**/*.js'],
    rules: { 'max-lines-per-function': 'off' },
  },
];
