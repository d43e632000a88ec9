#!/usr/bin/env node
// `npm run dev`: serve the demo agent (examples/workers/worker.ts, wrangler.toml `main`) with `wrangler dev` on loopback, behind a fresh bearer token
// (or $POLYLOOP_TOKEN if set), and print how to talk to it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const port = process.env.PORT ?? '8787';
const token = process.env.POLYLOOP_TOKEN || randomBytes(24).toString('base64url');
const base = `http://127.0.0.1:${port}`;

console.log(`
PolyLoop demo Worker on ${base}
POLYLOOP_TOKEN=${token}

  export POLYLOOP_TOKEN=${token}
  curl -s -X POST ${base}/runs -H "Authorization: Bearer $POLYLOOP_TOKEN" -H 'content-type: application/json' \\
       -d '{"runId":"demo-1","input":"hello brave new world"}'
  curl -s ${base}/runs/demo-1 -H "Authorization: Bearer $POLYLOOP_TOKEN"
  curl -s ${base}/runs/demo-1/trajectory -H "Authorization: Bearer $POLYLOOP_TOKEN"
  curl -s ${base}/runs/demo-1/log -H "Authorization: Bearer $POLYLOOP_TOKEN"    # NDJSON; POST it as { runId, input, log } elsewhere
  curl -sN ${base}/runs/demo-1/events -H "Authorization: Bearer $POLYLOOP_TOKEN"
  curl -s -X POST ${base}/runs/demo-1/cancel -H "Authorization: Bearer $POLYLOOP_TOKEN"
`);

const wrangler = fileURLToPath(new URL('../node_modules/wrangler/bin/wrangler.js', import.meta.url));
const child = spawn(process.execPath, [wrangler, 'dev', '--ip', '127.0.0.1', '--port', port, '--var', `POLYLOOP_TOKEN:${token}`, ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { WRANGLER_SEND_METRICS: 'false', ...process.env },
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
