import { defineConfig } from 'vite';

// `npm run example:web` serves this page; the page imports the library from ../../src.
export default defineConfig({
  root: import.meta.dirname,
  server: { host: '127.0.0.1', port: 5173 },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
});
