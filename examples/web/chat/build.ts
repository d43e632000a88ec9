/**
 * Bundles the chat page with esbuild (no Vite needed): `chat.js` and `index.html` into a
 * directory, ready to be served by any static server or by examples/node-chat.
 *
 *   npm run example:chat-page            # → examples/web/chat/dist/
 *   npx tsx examples/web/chat/build.ts <dir>
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const HERE = import.meta.dirname;

/** Bundle the page into `outDir` (`index.html` + `chat.js`); resolves to `outDir`. */
export async function buildChatPage(outDir: string): Promise<string> {
  await mkdir(outDir, { recursive: true });
  await build({
    entryPoints: [join(HERE, 'chat.tsx')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    minify: true,
    outfile: join(outDir, 'chat.js'),
    logLevel: 'warning',
  });
  await copyFile(join(HERE, 'index.html'), join(outDir, 'index.html'));
  return outDir;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(HERE, 'build.ts')) {
  const out = resolve(process.argv[2] ?? join(HERE, 'dist'));
  await buildChatPage(out);
  console.log(`chat page bundled into ${out}`);
}
