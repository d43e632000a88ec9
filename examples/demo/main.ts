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
 *   npm run demo -- --approve          run "demo-approve": writing the report needs a person's approval,
 *                                      so the run stops there (the process exits; nothing is lost)
 *   npm run demo -- --input approve    answer that request from a second command: the run finishes
 *   npm run demo -- --input deny --reason "not now"   refuse it: nothing is written, the run finishes
 * With OPENAI_API_KEY (or OPENAI_BASE_URL) set, the same run uses an OpenAI-compatible model
 * (OPENAI_MODEL, default gpt-4.1-mini) with native tool calls.
 * Then inspect it: npm run polyloop -- show .polyloop-demo demo
 */
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  acceptedReplies,
  defineAgent,
  isPolyLoopError,
  jsonActionInterpreter,
  readRunLog,
  resume,
  run,
} from '../../src/core/index.ts';
import type {
  AgentDefaults,
  DecisionInterpreter,
  EventSink,
  InputReply,
  InputRequest,
  ModelCaller,
  RunEvent,
  RunLogView,
  RunResult,
} from '../../src/core/index.ts';
import { FileStore } from '../../src/platform-node/index.ts';
import { countExports, localPolicy } from './policy.ts';
import { repoTools } from './tools.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const TEMPLATE = 'Observation:\n{observation}';
const DEFAULT_DIR = '.polyloop-demo';
const REPLIES = ['approve', 'deny', 'cancel'] as const;
const USAGE =
  'usage: npm run demo -- [--crash-after N] [--resume] [--dir DIR] [--local] [--approve] [--input approve|deny|cancel [--reason TEXT]]';

type Options = {
  readonly dir: string;
  readonly resume: boolean;
  readonly crashAfter: number | null;
  readonly local: boolean;
  /** `--approve` (or `--input`): the run "demo-approve", whose report needs a person's approval. */
  readonly approve: boolean;
  readonly input: (typeof REPLIES)[number] | null;
  readonly reason: string;
  /** The options that rebuild the same run, as the printed commands repeat them. */
  readonly sameRun: string;
};

function parseArgs(argv: readonly string[]): Options {
  let dir = resolve(DEFAULT_DIR);
  let resumeRun = false;
  let crashAfter: number | null = null;
  let local = false;
  let approve = false;
  let input: Options['input'] = null;
  let reason = 'Denied by the user.';
  const same: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = argv[i + 1];
    if (a === '--resume') resumeRun = true;
    else if (a === '--approve') approve = true;
    else if (a === '--local') {
      local = true;
      same.push(a);
    } else if (a === '--dir') {
      dir = resolve(optionValue(a, next, 'a directory'));
      same.push(a, JSON.stringify(argv[++i]));
    } else if (a === '--crash-after') {
      crashAfter = stepCount(optionValue(a, next, 'a number of steps'));
      i++;
    } else if (a === '--input') {
      const reply = optionValue(a, next, `a reply (${REPLIES.join(', ')})`);
      if (!(REPLIES as readonly string[]).includes(reply))
        throw new UsageError(`--input takes ${REPLIES.join(', ')}; got ${JSON.stringify(reply)}`);
      input = argv[++i] as Options['input'];
    } else if (a === '--reason') {
      reason = optionValue(a, next, 'a text');
      i++;
    } else throw new UsageError(`unknown option ${JSON.stringify(a)}`);
  }
  return {
    dir,
    resume: resumeRun,
    crashAfter,
    local,
    approve: approve || input !== null,
    input,
    reason,
    sameRun: same.join(' '),
  };
}

/** The value after option `name`, or a usage error naming what it needs. */
function optionValue(name: string, value: string | undefined, what: string): string {
  if (value === undefined || value === '' || (value.startsWith('--') && value !== '--'))
    throw new UsageError(`${name} needs ${what}`);
  return value;
}

/** `--crash-after`'s value: a whole number of steps, at least 1. */
function stepCount(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1)
    throw new UsageError(`--crash-after takes a whole number of steps (1 or more); got ${JSON.stringify(text)}`);
  return Number(text);
}

/** `1 entry`, `2 entries`: a count with its noun in the right number. */
function counted(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

const runIdOf = (opts: Options): string => (opts.approve ? 'demo-approve' : 'demo');
const reportFileOf = (opts: Options): string => join(opts.dir, 'demo-report.md');

class UsageError extends Error {}

/** Prints one line per step; kills this process when `crashAfter` steps are done. */
let sawEvents = false;

function printingSink(crashAfter: number | null): EventSink {
  const print = (line: string): void => void process.stdout.write(`${line}\n`);
  return {
    params: Object.freeze({ sink: 'demo-printer' }),
    deliver(e: RunEvent): void {
      sawEvents = true;
      if (e.type === 'run_started')
        print(e.resumed ? `run ${e.runId}: resumed at step ${e.fromStep}` : `run ${e.runId}: started`);
      else if (e.type === 'step_finished') {
        const s = e.step;
        const what =
          s.decision === 'action'
            ? (s.actionRepr ?? '')
            : s.decision === 'final'
              ? 'final answer'
              : `${s.decision}: ${s.explanation ?? s.observation ?? ''}`;
        const obs = s.observation ?? '';
        const detail = s.actionRepr?.startsWith('read_file')
          ? `${counted(obs.length, 'char', 'chars')}, ${counted(countExports(obs), 'exported name', 'exported names')}`
          : s.actionRepr?.startsWith('list_dir')
            ? counted(obs.split('\n').filter(Boolean).length, 'entry', 'entries')
            : obs.replace(/\s+/g, ' ').trim().slice(0, 80);
        print(
          `#${String(s.stepIndex).padEnd(3)} ${what.padEnd(58)} ${s.decision === 'action' ? `→ ${detail}` : ''}`.trimEnd(),
        );
        if (crashAfter !== null && s.stepIndex + 1 >= crashAfter) {
          print(
            `💥 --crash-after ${crashAfter}: SIGKILL to pid ${process.pid} now (resume with: npm run demo -- --resume)`,
          );
          process.kill(process.pid, 'SIGKILL');
        }
      } else if (e.type === 'input_received') print(`reply ${e.kind} to ${e.resultId} written; carrying it out`);
      else if (e.type === 'warning') print(`warning: ${e.message}`);
      else if (e.type === 'run_ended')
        print(
          `run ${e.runId}: ended (${e.stopReason}) after ${counted(e.steps, 'step', 'steps')}, ${counted(e.validActions, 'valid action', 'valid actions')}`,
        );
    },
  };
}

async function pickModel(
  local: boolean,
): Promise<{ model: ModelCaller; interpreter: DecisionInterpreter; real: boolean }> {
  const key = process.env['OPENAI_API_KEY'];
  const baseURL = process.env['OPENAI_BASE_URL'];
  if (!local && (key || baseURL)) {
    const { openAIModel, openAIToolInterpreter } = await import('../../src/adapters/openai.ts');
    const model = openAIModel({
      model: process.env['OPENAI_MODEL'] ?? 'gpt-4.1-mini',
      ...(key ? { apiKey: key } : {}),
      ...(baseURL ? { baseURL } : {}),
    });
    return { model, interpreter: openAIToolInterpreter(), real: true };
  }
  return {
    model: localPolicy({ observationPrefix: TEMPLATE.slice(0, TEMPLATE.indexOf('{observation}')) }),
    interpreter: jsonActionInterpreter(),
    real: false,
  };
}

/**
 * What every run of the demo agent shares, given once as the agent's defaults: a run is then
 * `run(agent, { runId, goal })`, and a new process resumes it by its id alone (the log keeps the goal).
 */
function demoDefaults(real: boolean, opts: Options): AgentDefaults {
  const tools = repoTools(ROOT, opts.approve ? reportFileOf(opts) : null);
  const system = real
    ? 'You explore a TypeScript repository with the list_dir and read_file tools (one call per turn). When you know the answer, reply with it as plain text.'
    : 'You explore a TypeScript repository. Reply with JSON: {"tool": name, "args": {...}} to call a tool, or {"final": answer}.';
  return {
    budget: real
      ? { maxSteps: 40, maxValidActions: 40, maxContextChars: 400_000 }
      : { maxSteps: 400, maxValidActions: 400, maxContextChars: 8_000_000 },
    executor: tools.executor(),
    tools,
    context: { run: [{ role: 'system', content: [{ type: 'text', text: system }] }] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: TEMPLATE,
    toolRenderStyle: real ? 'none' : 'markdown',
    cancelGraceMs: 2_000,
  };
}

const GOAL = 'Which module under src/ has the most exported names? Count the names each .ts module exports.';

/**
 * The reply `--input` gives to the run's open request (read from the log: a new process knows
 * nothing else), or, when nothing is open, why not and what to run instead.
 */
async function replyOf(store: FileStore, opts: Options): Promise<InputReply | string> {
  const view = readRunLog(await store.readLog(runIdOf(opts)));
  const pending = view.pending;
  if (pending === null) return noInputReason(view, opts);
  const resultId = pending.resultId;
  if (opts.input === 'approve') return { kind: 'approve', resultId };
  if (opts.input === 'deny') return { kind: 'deny', resultId, reason: opts.reason };
  return { kind: 'cancel', resultId };
}

/** Why a run awaits no input, with the command that carries it on: a fresh start would throw a landed reply away. */
function noInputReason(view: RunLogView, opts: Options): string {
  const runId = runIdOf(opts);
  const cmd = `npm run demo --${opts.sameRun ? ` ${opts.sameRun}` : ''}`;
  if (view.state === 'not_started')
    return `run ${runId} awaits no input: it has not started (start one with: ${cmd} --approve)`;
  if (view.state === 'ended')
    return `run ${runId} awaits no input: it has ended (${view.ended?.stopReason ?? '?'}); start a fresh one with: ${cmd} --approve`;
  const landed = view.inFlight?.input?.reply.kind;
  const why =
    landed === undefined ? 'it was interrupted' : `a reply (${landed}) already landed and is not yet carried out`;
  return `run ${runId} awaits no input: ${why}; carry it on with: ${cmd} --resume --approve`;
}

/** What the run asks, and the exact commands that answer it from another process. */
function printPending(p: InputRequest, opts: Options): void {
  const action = p.decision?.action;
  const what =
    action?.kind === 'tool_call'
      ? `${action.name}(${JSON.stringify(action.arguments)})`
      : action
        ? `code: ${action.source}`
        : 'the model call';
  const cmd = `npm run demo --${opts.sameRun ? ` ${opts.sameRun}` : ''}`;
  const lines = [
    '',
    `⏸  run ${runIdOf(opts)} awaits ${p.kind === 'approval' ? 'approval' : p.kind === 'answer' ? 'an answer' : 'settlement'} at step ${p.stepIndex} (${p.resultId}; replies ${acceptedReplies(p.kind, p.target).join(', ')}):`,
    `     ${what.length > 300 ? `${what.slice(0, 299)}…` : what}`,
    '   Nothing is lost if this process exits now. Answer it from another command:',
    `     ${cmd} --input approve`,
    `     ${cmd} --input deny --reason "not now"`,
    `   inspect: npm run polyloop -- show ${opts.dir} ${runIdOf(opts)}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n(see the comment at the top of examples/demo/main.ts for what each option does)\n`);
    return 0;
  }
  const opts = parseArgs(argv);
  const runId = runIdOf(opts);
  const store = new FileStore({ dir: opts.dir, onWarning: (w) => process.stdout.write(`store: ${w.message}\n`) });
  const { model, interpreter, real } = await pickModel(opts.local);
  const syntheticObservations = {
    notExecuted: 'That action was not executed.',
    envError: 'The environment failed; try something else.',
  };
  const agent = defineAgent({
    model,
    interpreter,
    store,
    events: printingSink(opts.crashAfter),
    syntheticObservations,
    defaults: demoDefaults(real, opts),
  });
  process.stdout.write(`model: ${String(model.params['model'])} · store: ${store.logPath(runId)}\n`);
  let result: RunResult;
  if (opts.input !== null) {
    const input = await replyOf(store, opts);
    if (typeof input === 'string') {
      process.stderr.write(`demo: ${input}\n`);
      return 1;
    }
    result = await resume(agent, runId, { input });
  } else if (opts.resume) {
    result = await resume(agent, runId);
  } else {
    const release = await store.acquire(runId, {}); // refuses if a demo is still running
    await rm(store.logPath(runId), { force: true });
    if (opts.approve) await rm(reportFileOf(opts), { force: true });
    await release();
    result = await run(agent, { runId, goal: GOAL });
  }
  if (result.pending !== null) {
    printPending(result.pending, opts);
    return 0;
  }
  if (opts.resume && !sawEvents)
    process.stdout.write(
      `run ${runId}: had already ended; this is its stored result (run \`npm run demo\` for a fresh one)\n`,
    );
  process.stdout.write(
    `\nanswer: ${result.finalAnswer ?? `(none: ${result.stopReason})`}\ninspect: npm run polyloop -- show ${opts.dir} ${runId}\n`,
  );
  return result.stopReason === 'final_answer' ? 0 : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (e: unknown) => {
    if (e instanceof UsageError) process.stderr.write(`demo: ${e.message}\n${USAGE}\n`);
    else if (isPolyLoopError(e, 'run_not_found'))
      process.stderr.write('demo: there is no demo run to resume yet; start one with: npm run demo\n');
    else if (isPolyLoopError(e)) process.stderr.write(`demo: ${e.name}: ${e.message}\n`);
    else throw e;
    process.exitCode = e instanceof UsageError ? 2 : 1;
  },
);
