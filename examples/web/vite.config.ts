import { defineConfig } from 'vite';

/**
 * Where `/worker/*` goes: the PolyLoop Worker of `npm run dev` (127.0.0.1:8787) unless
 * POLYLOOP_WORKER_URL says otherwise. Proxied, the Worker answers on this page's own origin, so
 * the browser needs no CORS from it.
 */
const worker = process.env['POLYLOOP_WORKER_URL'] ?? 'http://127.0.0.1:8787';

// `npm run example:web` serves this page; the page imports the library from ../../src.
export default defineConfig({
  root: import.meta.dirname,
  server: {
    host: '127.0.0.1',
    port: 5173,
    // The trailing slash keeps the page's own worker-*.ts modules out of the proxy.
    proxy: { '/worker/': { target: worker, changeOrigin: true, rewrite: (path) => path.replace(/^\/worker/, '') } },
  },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
});
