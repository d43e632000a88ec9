import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { playwright } from '@vitest/browser-playwright';
import { defineConfig } from 'vitest/config';
import { DEBIAN_CHROMIUM, findBrowser } from './scripts/ensure-browser.mjs';

// The Chromium that `npm test`'s first step (scripts/ensure-browser.mjs) found or installed:
// CHROMIUM_PATH, Debian's, or a Playwright build. Set in the environment so the Playwright
// end-to-end tests in the node project launch the same one.
const CHROMIUM = findBrowser()?.path ?? DEBIAN_CHROMIUM;
process.env['CHROMIUM_PATH'] = CHROMIUM;

// One config, one project per runtime (test/README.md says which runtime runs what): `node`,
// `workers` and `browser`. Each loads the JSON Schema validator before its tests (the setup file says why).
const SETUP = ['./test/support/json-schema-loaded.ts'];
export default defineConfig({
  test: {
    // Vitest's default is one worker fewer than the cores: on the 2-core machine that is one, and the
    // suite's files (many of them waiting on child processes, Chromium or workerd) ran one at a time.
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          environment: 'node',
          testTimeout: 30_000,
          setupFiles: SETUP,
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: './wrangler.toml' },
            main: './test/workers/fixtures/probe-worker.ts',
            miniflare: {
              bindings: { POLYLOOP_TOKEN: 'test-token' },
              durableObjects: {
                PROBES: { className: 'ProbeRunObject', useSQLite: true },
                CHAT_PROBES: { className: 'ChatProbeObject', useSQLite: true },
                TRACED_CHAT: { className: 'TracedChatObject', useSQLite: true },
                FAMILY: { className: 'FamilyRunObject', useSQLite: true },
              },
            },
          }),
        ],
        // globalSetup: the MCP fixture server (Node, loopback) the workerd tests call: test/fixtures/mcp/.
        test: {
          name: 'workers',
          include: ['test/workers/**/*.test.ts'],
          testTimeout: 30_000,
          setupFiles: SETUP,
          globalSetup: ['./test/fixtures/mcp/global-setup.ts'],
        },
      },
      {
        // Real Chromium (Debian's), real IndexedDB and Web Locks: the proof for polyloop/web.
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          testTimeout: 30_000,
          setupFiles: SETUP,
          // The MCP fixture server (Node, loopback) the browser tests call: test/fixtures/mcp/.
          globalSetup: ['./test/fixtures/mcp/global-setup.ts'],
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            instances: [{ browser: 'chromium' }],
            provider: playwright({
              launchOptions: {
                executablePath: CHROMIUM,
                args: [
                  '--headless',
                  '--no-sandbox',
                  '--disable-gpu',
                  '--disable-dev-shm-usage',
                  '--disable-background-networking',
                  '--disable-component-update',
                  '--disable-sync',
                  '--no-first-run',
                ],
              },
            }),
          },
        },
      },
    ],
  },
});
