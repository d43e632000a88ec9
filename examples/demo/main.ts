/**
 * `npm run demo` — a real agent run on the embedded default: Node + FileStore, a deterministic
 * local policy model, and real tools on real data (this repository's own `src/`), answering
 * "which module has the most exported names?". One line per step, live from the event sink.
 *
 *   npm run demo                       start a fresh run "demo" in ./.polyloop-demo/
 *   npm run demo -- --crash-after 3    SIGKILL this process once 3 steps are done
 *   npm run demo -- --resume           finish the same run from its log
 *   npm run demo -- --dir <dir>        keep the log elsewhere
 *   npm run demo -- --local            ignore OPENAI_API_KEY and use the local policy
 * With OPENAI_API_KEY (or OPENAI_BASE_URL) set, the same run uses an OpenAI-compatible model
 * (OPENAI_MODEL, default gpt-4.1-mini) with native tool calls.
 * Then inspect it: npm run polyloop -- show .polyloop-demo demo
 */
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { defineAgent, isPolyLoopError, resume, run } from '../../src/core/index.ts';
import type { DecisionInterpreter, EventSink, ModelCaller, RunEvent, RunRequest, RunResult } from '../../src/core/index.ts';
import { FileStore } from '../../src/platform-node/index.ts';
import { jsonActionInterpreter } from '../../src/testing/index.ts';
import { countExports, localPolicy } from './policy.ts';
import { repoTools } from './tools.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const RUN_ID = 'demo';
const TEMPLATE = 'Observation:\n{observation}';

type Options = { readonly dir: string; readonly resume: boolean; readonly crashAfter: number | null; readonly local: boolean };

function parseArgs(argv: readonly string[]): Options {
  let dir = resolve('.polyloop-demo');
  let resumeRun = false;
  let crashAfter: number | null = null;
  let local = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--resume') resumeRun = true;
    else if (a === '--local') local = true;
    else if (a === '--dir' && argv[i + 1]) dir = resolve(argv[++i] as string);
    else if (a === '--crash-after' && /^\d+$/.test(argv[i + 1] ?? '') && Number(argv[i + 1]) > 0) crashAfter = Number(argv[++i]);
    else throw new UsageError(`unknown or incomplete option ${JSON.stringify(a)}`);
  }
  return { dir, resume: resumeRun, crashAfter, local };
}

class UsageError extends Error {}

/** Prints one line per step; kills this process when `crashAfter` steps are done. */
let sawEvents = false;

function printingSink(crashAfter: number | null): EventSink {
  const print = (line: string): void => void process.stdout.write(line + '\n');
  return {
    params: Object.freeze({ sink: 'demo-printer' }),
    deliver(e: RunEvent): void {
      sawEvents = true;
      if (e.type === 'run_started') print(e.resumed ? `run ${e.runId}: resumed at step ${e.fromStep}` : `run ${e.runId}: started`);
      else if (e.type === 'step_finished') {
        const s = e.step;
        const what = s.decision === 'action' ? (s.actionRepr ?? '') : s.decision === 'final' ? 'final answer' : `${s.decision}: ${s.explanation ?? s.observation ?? ''}`;
        const obs = s.observation ?? '';
        const detail = s.actionRepr?.startsWith('read_file') ? `${obs.length} chars, ${countExports(obs)} exported names` : s.actionRepr?.startsWith('list_dir') ? `${obs.split('\n').filter(Boolean).length} entries` : obs.replace(/\s+/g, ' ').trim().slice(0, 80);
        print(`#${String(s.stepIndex).padEnd(3)} ${what.padEnd(58)} ${s.decision === 'action' ? `→ ${detail}` : ''}`.trimEnd());
        if (crashAfter !== null && s.stepIndex + 1 >= crashAfter) {
          print(`💥 --crash-after ${crashAfter}: SIGKILL to pid ${process.pid} now (resume with: npm run demo -- --resume)`);
          process.kill(process.pid, 'SIGKILL');
        }
      } else if (e.type === 'warning') print(`warning: ${e.message}`);
      else if (e.type === 'run_ended') print(`run ${e.runId}: ended (${e.stopReason}) after ${e.steps} steps, ${e.validActions} valid actions`);
    },
  };
}

async function pickModel(local: boolean): Promise<{ model: ModelCaller; interpreter: DecisionInterpreter; real: boolean }> {
  const key = process.env['OPENAI_API_KEY'];
  const baseURL = process.env['OPENAI_BASE_URL'];
  if (!local && (key || baseURL)) {
    const { openAIModel, openAIToolInterpreter } = await import('../../src/adapters/openai.ts');
    const model = openAIModel({ model: process.env['OPENAI_MODEL'] ?? 'gpt-4.1-mini', ...(key ? { apiKey: key } : {}), ...(baseURL ? { baseURL } : {}) });
    return { model, interpreter: openAIToolInterpreter(), real: true };
  }
  return { model: localPolicy({ observationPrefix: TEMPLATE.slice(0, TEMPLATE.indexOf('{observation}')) }), interpreter: jsonActionInterpreter(), real: false };
}

function buildRequest(real: boolean): RunRequest {
  const tools = repoTools(ROOT);
  const system = real
    ? 'You explore a TypeScript repository with the list_dir and read_file tools (one call per turn). When you know the answer, reply with it as plain text.'
    : 'You explore a TypeScript repository. Reply with JSON: {"tool": name, "args": {...}} to call a tool, or {"final": answer}.';
  return {
    runId: RUN_ID,
    budget: real ? { maxSteps: 40, maxValidActions: 40, maxContextChars: 400_000 } : { maxSteps: 200, maxValidActions: 200, maxContextChars: 5_000_000 },
    executor: tools.executor(),
    tools,
    context: { run: [{ role: 'system', content: [{ type: 'text', text: system }] }], goal: [{ role: 'user', content: [{ type: 'text', text: 'Which module under src/ has the most exported names? Count the names each .ts module exports.' }] }] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: TEMPLATE,
    toolRenderStyle: real ? 'none' : 'markdown',
    cancelGraceMs: 2_000,
  };
}

async function main(): Promise<number> {
  const opts = parseArgs(process.argv.slice(2));
  const store = new FileStore({ dir: opts.dir, onWarning: (w) => process.stdout.write(`store: ${w.message}\n`) });
  const { model, interpreter, real } = await pickModel(opts.local);
  const agent = defineAgent({ model, interpreter, store, events: printingSink(opts.crashAfter), syntheticObservations: { notExecuted: 'That action was not executed.', envError: 'The environment failed; try something else.' } });
  const request = buildRequest(real);
  process.stdout.write(`model: ${String(model.params['model'])} · store: ${store.logPath(RUN_ID)}\n`);
  let result: RunResult;
  if (opts.resume) {
    result = await resume(agent, request);
  } else {
    const release = await store.acquire(RUN_ID, {}); // refuses if a demo is still running
    await rm(store.logPath(RUN_ID), { force: true });
    await release();
    result = await run(agent, request);
  }
  if (opts.resume && !sawEvents) process.stdout.write(`run ${RUN_ID}: had already ended; this is its stored result (run \`npm run demo\` for a fresh one)\n`);
  process.stdout.write(`\nanswer: ${result.finalAnswer ?? `(none: ${result.stopReason})`}\ninspect: npm run polyloop -- show ${opts.dir} ${RUN_ID}\n`);
  return result.stopReason === 'final_answer' ? 0 : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (e: unknown) => {
    if (e instanceof UsageError) process.stderr.write(`demo: ${e.message}\nusage: npm run demo -- [--crash-after N] [--resume] [--dir DIR] [--local]\n`);
    else if (isPolyLoopError(e, 'run_not_found')) process.stderr.write('demo: there is no demo run to resume yet; start one with: npm run demo\n');
    else if (isPolyLoopError(e)) process.stderr.write(`demo: ${e.name}: ${e.message}\n`);
    else throw e;
    process.exitCode = e instanceof UsageError ? 2 : 1;
  },
);
