import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/**
 * The folders of src/sync, lowest first: a folder imports only the folders before it, so
 * the data's way (spec, read, prepare, write, pull...) reads in one direction. A folder
 * name appears in an import as `../NAME/`, which is what the patterns below match.
 */
export const SYNC_STAGES = [
  'model',
  'mapping',
  'sources',
  'job-spec',
  'sinks',
  'state',
  'batch',
  'read',
  'prepare',
  'write',
  'fan-out',
  'pull',
  'two-way',
  'cdc',
  'singer',
  'check',
  'finish',
  'notify',
];

export default tseslint.config(
  { ignores: ['node_modules/', '.tools/', 'coverage/', '.stryker-tmp/', 'reports/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: ['eslint.config.js', 'bin/rowbridge.js', 'stryker.config.mjs'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // No import cycles anywhere in the product: a cycle hides which module is the lower layer.
    files: ['src/**/*.ts', 'config/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js'] })],
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  ...layer(
    'src/ground/**/*.ts',
    ['api', 'sync', 'queue', 'cli', 'ops', 'emulator', 'config'],
    'ground holds the logger and the error taxonomy: it imports no other layer',
    ['bullmq'],
  ),
  ...layer(
    'config/**/*.ts',
    ['api', 'sync', 'queue', 'cli', 'ops', 'emulator'],
    'config is the settings schema: it imports only ground',
    ['bullmq'],
  ),
  ...layer(
    'src/api/**/*.ts',
    ['sync', 'queue', 'cli', 'ops', 'emulator', 'config'],
    'the platform client (api) imports only ground',
    ['bullmq'],
  ),
  ...layer(
    'src/sync/**/*.ts',
    ['queue', 'cli', 'ops', 'emulator'],
    'the sync engine imports ground, api and config, never the queue or the presentation',
    ['bullmq'],
  ),
  ...SYNC_STAGES.flatMap((stage, i) =>
    layer(
      `src/sync/${stage}/**/*.ts`,
      ['queue', 'cli', 'ops', 'emulator', ...SYNC_STAGES.slice(i + 1)],
      `sync/${stage} imports ground, api, config and the sync folders below it: ${SYNC_STAGES.slice(0, i).join(', ') || 'none'} (SYNC_STAGES in eslint.config.js)`,
      ['bullmq'],
    ),
  ),
  ...layer(
    'src/queue/**/*.ts',
    ['cli', 'ops', 'emulator'],
    'the queue wiring imports ground, api, config and sync',
    [],
  ),
  ...layer(
    'src/ops/**/*.ts',
    ['cli', 'emulator'],
    'ops (metrics, health, dashboard) receives what it needs; it does not import the CLI',
    [],
  ),
  ...layer(
    'src/cli/**/*.ts',
    ['emulator/**/!(start-emulator|options).ts'],
    'the CLI starts the emulator through its entry point only',
    [],
  ),
  {
    // The emulator is the test double of the platform: it imports nothing of the product,
    // so a misreading in the client cannot be mirrored by it (issue 8).
    files: ['src/emulator/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/api/**', '**/sync/**', '**/queue/**', '**/cli/**', '**/ops/**', '**/config/**'],
              message: 'the emulator stands apart from the product: write what it needs in src/emulator',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);

/**
 * Layers go one way: ground <- api <- (config) <- sync <- queue <- cli/ops; the emulator
 * apart. `forbidden` names the folders a layer may not import from.
 * @param {string} files
 * @param {string[]} forbidden
 * @param {string} message
 * @param {string[]} packages
 */
function layer(files, forbidden, message, packages) {
  return [
    {
      files: [files],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                group: forbidden
                  .map((f) => (f.includes('/') ? `**/${f}` : `**/${f}/**`))
                  .concat(forbidden.includes('config') ? ['**/config/settings.ts'] : []),
                message,
              },
              ...(packages.length > 0
                ? [{ group: packages, message: `${message} (no BullMQ below the queue)` }]
                : []),
            ],
          },
        ],
      },
    },
  ];
}
