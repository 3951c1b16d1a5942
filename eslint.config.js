// Lint rules. The important one keeps src/engine pure (ARCHITECTURE.md rule 1): the engine may
// import only itself and a few pure numerical packages, never node:*, the server or storage.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'bench-results/**', 'clients/**/dist/**', 'coverage/**', 'test-artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['src/engine/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'os', 'crypto', 'worker_threads', 'child_process', 'http', 'https', 'net'],
              message: 'src/engine is pure: no Node built-ins.',
            },
            {
              group: ['**/domain/**', '**/storage/**', '**/http/**', '**/cli/**', '**/app', '**/app.js', '**/server', '**/server.js', '**/config', '**/config.js'],
              message: 'src/engine must not import from the rest of the server (http → domain → engine).',
            },
            {
              group: ['fastify*', '@fastify/*', 'better-sqlite3', 'pino*', 'piscina', 'zod', 'prom-client'],
              message: 'src/engine is pure math: no server, storage or logging libraries.',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', { name: 'Date', message: 'The engine has no clock.' }, { name: 'process', message: 'The engine has no process access.' }],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'Randomness is an input: use engine/random.' }],
    },
  },
  {
    files: ['src/storage/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/http/**', '**/domain/**'], message: 'storage does not import upward.' }] }],
    },
  },
  {
    // ARCHITECTURE.md rule 1: http → domain → {engine, storage}. Routes reach storage only through
    // the domain, so a second storage backend or a change in its records never touches a route.
    files: ['src/http/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/storage/**', '**/storage', 'better-sqlite3', 'pg'], message: 'http does not import storage: go through the domain.' }] }],
    },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/http/**', 'fastify*', '@fastify/*'], message: 'domain does not import http.' }] }],
    },
  },
  {
    // The dashboard's scripts run in the browser, not in Node.
    files: ['src/ui/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
