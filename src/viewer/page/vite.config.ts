import { defineConfig } from 'vite';

/**
 * The run viewer page, built into dist/viewer/page (served by `polyloop view`): plain TypeScript and
 * DOM, no framework, no request to anywhere but the viewer itself.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  logLevel: 'warn',
  build: {
    outDir: '../../../dist/viewer/page',
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});
