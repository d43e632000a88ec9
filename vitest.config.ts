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
    ],
  },
});
