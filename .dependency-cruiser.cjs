/** The dependency rules of docs/design/README.md#dependency-rules, checked in `npm test` (`npm run lint:deps`). */
const PURE =
  '^src/core/(tools|serialization|internal/assembly|internal/stopping|internal/recovery|internal/values)\\.ts$';
/** Every kind of npm dependency dependency-cruiser tells apart. */
const NPM = ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'];

/**
 * The two rules of a folder that runs in a tab, a Worker and Node: none of `forbidden` (a `src/…`
 * alternation), no node:* or cloudflare:*, and no Node core module imported without the prefix.
 */
function webStandardOnly(name, dir, comment, forbidden) {
  return [
    {
      name: `${name}-web-standard-only`,
      comment,
      severity: 'error',
      from: { path: `^src/${dir}/` },
      to: { path: `^(node:|cloudflare:)|^src/(${forbidden})` },
    },
    {
      name: `${name}-no-node-builtins`,
      comment: 'The same for Node core modules imported without the node: prefix.',
      severity: 'error',
      from: { path: `^src/${dir}/` },
      to: { dependencyTypes: ['core'] },
    },
  ];
}

module.exports = {
  forbidden: [
    {
      name: 'core-web-standard-only',
      comment: 'Rule 1: src/core imports no node:*, no cloudflare:*, nothing from platforms or adapters.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: {
        path: '^(node:|cloudflare:)|^src/(platform-|adapters/|zod/|testing/|mcp/|otel/)',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'core-no-node-builtins',
      comment: 'Rule 1: Node core modules imported without the node: prefix count too.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'core-no-platform-types',
      comment: 'Rule 1 also for type-only imports.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/(platform-|adapters/|zod/|testing/|mcp/|otel/)' },
    },
    {
      name: 'types-imports-nothing',
      comment: 'Rule 2: types.ts and the type modules it re-exports (types/*) import nothing but types/*.',
      severity: 'error',
      from: { path: '^src/core/types(\\.ts$|/)' },
      to: { pathNot: '^src/core/types/[^/]+\\.ts$' },
    },
    {
      name: 'ports-imports-types-only',
      comment: 'Rule 2: ports.ts imports only types.ts.',
      severity: 'error',
      from: { path: '^src/core/ports\\.ts$' },
      to: { pathNot: '^src/core/types\\.ts$' },
    },
    {
      name: 'no-third-party-in-public-types',
      comment: 'Rule 2: types.ts, types/* and ports.ts (the public signatures) name no third-party type.',
      severity: 'error',
      from: { path: '^src/core/(types|ports)(\\.ts$|/)' },
      to: { dependencyTypes: NPM },
    },
    {
      name: 'pure-modules-meet-only-in-session',
      comment: 'Rule 3: tools, serialization and internal/* do not import each other.',
      severity: 'error',
      from: { path: PURE },
      to: { path: PURE },
    },
    {
      name: 'internal-is-leaf',
      comment:
        'Rule 4 (structural half): internal/* import only types, errors and the leaves recovery is built from; ' +
        'purity is checked in test/node/core/purity-and-bundle.test.ts.',
      severity: 'error',
      from: { path: '^src/core/internal/' },
      to: { pathNot: '^src/core/(types|errors)\\.ts$|^src/core/internal/(json-compare|step-calls|step-track)\\.ts$' },
    },
    {
      name: 'platforms-independent',
      comment: 'Rule 5: platform-* never import each other.',
      severity: 'error',
      from: { path: '^src/platform-([^/]+)/' },
      to: { path: '^src/platform-', pathNot: '^src/platform-$1/' },
    },
    {
      name: 'adapters-no-platform',
      comment: 'Rule 5: adapters never import a platform.',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: '^src/platform-' },
    },
    ...webStandardOnly(
      'mcp',
      'mcp',
      'polyloop/mcp runs in a tab, a Worker and Node: no platform, no node:* or cloudflare:*, no Node core module.',
      'platform-|adapters/|zod/|testing/',
    ),
    {
      name: 'platforms-use-core-entry',
      comment:
        'Platforms, adapters, chat, MCP, zod and testing import core only through its two entries: src/core/index.ts (polyloop) and src/core/internal-entry.ts (polyloop/internal, the unstable plumbing).',
      severity: 'error',
      from: { path: '^src/(platform-[^/]+|adapters|zod|testing|mcp|chat|otel)/' },
      to: { path: '^src/core/', pathNot: '^src/core/(index|internal-entry)\\.ts$' },
    },
    ...webStandardOnly(
      'chat',
      'chat',
      'polyloop/chat runs in a tab, a Worker and Node: no platform, adapter or test kit, no node:* or cloudflare:*, no Node core module.',
      'platform-|adapters/|zod/|testing/|mcp/',
    ),
    {
      name: 'chat-ai-types-only',
      comment: 'ai is an optional peer of polyloop/chat: its types only, never a run-time import.',
      severity: 'error',
      from: { path: '^src/chat/' },
      to: {
        dependencyTypes: NPM,
        dependencyTypesNot: ['type-only'],
      },
    },
    ...webStandardOnly(
      'otel',
      'otel',
      'polyloop/otel runs in a tab, a Worker and Node: no platform, adapter, test kit or other room, no node:* or cloudflare:*, no Node core module.',
      'platform-|adapters/|zod/|testing/|mcp/|chat/|cli/|viewer/',
    ),
    {
      name: 'otel-api-only',
      comment:
        'polyloop/otel is built on @opentelemetry/api alone (an optional peer): no SDK, no semantic-conventions package, no other npm package.',
      severity: 'error',
      from: { path: '^src/otel/' },
      to: { dependencyTypes: NPM, pathNot: '(^|/)node_modules/@opentelemetry/api/' },
    },
    {
      name: 'postgres-brings-no-driver',
      comment:
        "polyloop/postgres takes the application's own pg.Pool: it imports no npm package (pg included), only core and node:*.",
      severity: 'error',
      from: { path: '^src/platform-postgres/' },
      to: { dependencyTypes: NPM },
    },
    {
      name: 'viewer-page-standalone',
      comment:
        'The run viewer page (src/viewer/page, built by vite into dist/viewer/page) talks to its server over HTTP only: it imports nothing outside src/viewer/page, nothing of node.',
      severity: 'error',
      from: { path: '^src/viewer/page/', pathNot: '^src/viewer/page/vite\\.config\\.ts$' },
      to: { pathNot: '^src/viewer/page/' },
    },
    {
      name: 'viewer-server-knows-no-cli',
      comment:
        "The viewer's server (src/viewer/server) imports FileStore plumbing (src/platform-node) and core through its entries only: never the CLI, which adapts it, nor the page.",
      severity: 'error',
      from: { path: '^src/viewer/server/' },
      to: { path: '^src/', pathNot: '^src/(viewer/server/|platform-node/|core/(index|internal-entry)\\.ts$)' },
    },
    {
      name: 'cli-imports-its-servants',
      comment:
        "The polyloop command (src/cli) imports the viewer's server, src/platform-node and core through its entries, nothing else of src.",
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: '^src/', pathNot: '^src/(cli/|viewer/server/|platform-node/|core/(index|internal-entry)\\.ts$)' },
    },
    {
      name: 'platform-node-is-the-file-store',
      comment: 'src/platform-node (FileStore and what it uses) never imports the CLI or the viewer built on it.',
      severity: 'error',
      from: { path: '^src/platform-node/' },
      to: { path: '^src/(cli|viewer)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
