// Lint: typescript-eslint's recommended rules, plus the bans that keep foundation/, bench/,
// sim/ and the model runnable in virtual time (the simulator reuses bench/ with an injected clock and rng).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setImmediate: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        performance: 'readonly',
        URL: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // dependency-cruiser's configuration is CommonJS.
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } } },
  {
    files: ['foundation/**/*.ts', 'bench/**/*.ts', 'sim/**/*.ts', 'orchestrator/model/**/*.ts'],
    ignores: ['foundation/clock.ts', 'sim/clock.ts', '**/*.test.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Use the injected Clock.' },
        { object: 'Math', property: 'random', message: 'Use the injected Rng.' },
        { object: 'performance', property: 'now', message: 'Use the injected Clock.' },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'setTimeout', message: 'Use the injected Clock.' },
        { name: 'setInterval', message: 'Use the injected Clock.' },
      ],
    },
  },
);
