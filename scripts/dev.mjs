#!/usr/bin/env node
// `npm run dev`: serve the demo agent (examples/workers/worker.ts, wrangler.toml `main`) with `wrangler dev` on loopback, behind a fresh bearer token
// (or $POLYLOOP_TOKEN if set), and print how to talk to it. `npm run dev -- --help` lists the knobs.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const USAGE = `Usage: npm run dev -- [--port <n>] [--persist-to <dir>] [other wrangler dev options]

Serves the demo agent (examples/workers/worker.ts) with wrangler dev on 127.0.0.1.

Options
  --port <n>            port to listen on (default 8787, or $PORT)
  --persist-to <dir>    keep the Durable Objects' storage (runs, the run index) in <dir>,
                        so runs outlive a restart (default: .wrangler/state, wrangler's own)
  -h, --help            print this and exit
  Anything else is passed to wrangler dev as it is (see npx wrangler dev --help).

Environment
  POLYLOOP_TOKEN        the bearer token every request needs (default: a fresh random one, printed)
  PORT                  as --port

The demo's POST /runs input: a goal string, or
  { "goal": string, "pauseMs"?: 0-10000, "approve"?: boolean }
  goal      the words to reverse, one reverse_word tool call per word (at most 12 words)
  pauseMs   slows every model call and tool call by this many milliseconds (to watch, cancel,
            or kill a run mid-way)
  approve   each reverse_word call waits for a person: GET /runs/:id shows it awaiting_input
            with "pending"; answer with POST /runs/:id/input {"kind":"approve","resultId":…}

The example page (npm run example:web, http://127.0.0.1:5173) may call this Worker: CORS allows it.
The HTTP surface: docs/http.md.
`;

/** The options this script reads itself; the rest go to wrangler. Exits with a message on a bad value. */
function parseArgs(argv) {
  let port = process.env.PORT || '8787';
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') {
      process.stdout.write(USAGE);
      process.exit(0);
    }
    if (arg === '--port' || arg.startsWith('--port=')) {
      port = arg === '--port' ? argv[++i] : arg.slice('--port='.length);
      continue;
    }
    rest.push(arg);
  }
  if (!/^\d{1,5}$/.test(port ?? '') || Number(port) < 1 || Number(port) > 65535) {
    process.stderr.write(
      `npm run dev: --port (or $PORT) must be a port number from 1 to 65535, got ${JSON.stringify(port ?? '')}\n\n${USAGE}`,
    );
    process.exit(2);
  }
  return { port, rest };
}

const { port, rest } = parseArgs(process.argv.slice(2));
const root = fileURLToPath(new URL('..', import.meta.url));
const token = process.env.POLYLOOP_TOKEN || randomBytes(24).toString('base64url');
const base = `http://127.0.0.1:${port}`;

console.log(`
PolyLoop demo Worker on ${base}   (npm run dev -- --help: port, --persist-to, the demo's input)
POLYLOOP_TOKEN=${token}

  export POLYLOOP_TOKEN=${token}
  curl -s -X POST ${base}/runs -H "Authorization: Bearer $POLYLOOP_TOKEN" -H 'content-type: application/json' \\
       -d '{"runId":"demo-1","input":"hello brave new world"}'
  curl -s ${base}/runs/demo-1 -H "Authorization: Bearer $POLYLOOP_TOKEN"
  curl -s ${base}/runs/demo-1/trajectory -H "Authorization: Bearer $POLYLOOP_TOKEN"
  curl -s ${base}/runs/demo-1/log -H "Authorization: Bearer $POLYLOOP_TOKEN"    # NDJSON; POST it as { runId, input, log } elsewhere
  curl -sN ${base}/runs/demo-1/events -H "Authorization: Bearer $POLYLOOP_TOKEN"
  curl -s ${base}/runs -H "Authorization: Bearer $POLYLOOP_TOKEN"               # every run, newest first
  curl -s -X POST ${base}/runs/demo-1/cancel -H "Authorization: Bearer $POLYLOOP_TOKEN"   # 409 once it ended
`);

const wrangler = fileURLToPath(new URL('../node_modules/wrangler/bin/wrangler.js', import.meta.url));
const child = spawn(
  process.execPath,
  [wrangler, 'dev', '--ip', '127.0.0.1', '--port', port, '--var', `POLYLOOP_TOKEN:${token}`, ...rest],
  {
    cwd: root,
    stdio: 'inherit',
    env: { WRANGLER_SEND_METRICS: 'false', ...process.env },
  },
);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
