import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

// One config, one project per runtime (see ../shared/TOOLCHAIN.md). The `workers` and `browser`
// projects join this list as their platforms land.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'node',
          include: ['test/node/**/*.test.ts'],
          environment: 'node',
          testTimeout: 30_000,
        },
      },
      {
        plugins: [cloudflareTest({ wrangler: { configPath: './wrangler.toml' }, main: './src/platform-workers/worker.ts' })],
        test: { name: 'workers', include: ['test/workers/**/*.test.ts'], testTimeout: 30_000 },
      },
    ],
  },
});
