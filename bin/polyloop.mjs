#!/usr/bin/env node
// Launcher of the `polyloop` CLI: the compiled build when present (an installed package),
// otherwise the TypeScript source through tsx (a checkout without `npm run build`). The CLI is
// not part of `polyloop/node`'s exports: it is loaded from its own file.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const built = fileURLToPath(new URL('../dist/cli/cli.js', import.meta.url));
let cli;
if (existsSync(built)) {
  cli = await import(pathToFileURL(built).href);
} else {
  const { tsImport } = await import('tsx/esm/api');
  cli = await tsImport('../src/cli/cli.ts', import.meta.url);
}
// A reader that stops early (`polyloop show … | head`) closes the pipe: what is left unwritten
// was not wanted, so the command ends quietly (exit 0) instead of dying on an unhandled EPIPE.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
}
try {
  const io = {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    outIsTerminal: process.stdout.isTTY === true,
  };
  process.exitCode = await cli.runCli(process.argv.slice(2), io);
} catch (e) {
  process.stderr.write(`polyloop: unexpected error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 70;
}
