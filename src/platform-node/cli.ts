/**
 * The `polyloop` command: inspect FileStore run logs from a terminal.
 *   polyloop runs <dir> [--json]          a table of runs
 *   polyloop show <dir> <runId> [--json]  one run's trajectory, step by step
 * Exit codes: 0 ok, 1 missing directory or unknown run, 2 usage error, 3 corrupt log.
 * @module
 */
import type { StepRecord } from '../core/index.ts';
import { describeStatus, inspectRun, listRuns, MissingDirectoryError } from './inspect.ts';
import type { RunListing } from './inspect.ts';

/** Where the CLI writes. */
export type CliIo = { readonly out: (text: string) => void; readonly err: (text: string) => void };

/** Exit codes of the `polyloop` command. */
export const EXIT = { ok: 0, notFound: 1, usage: 2, corrupt: 3 } as const;

const USAGE = `usage:
  polyloop runs <dir> [--json]          list the runs in a FileStore directory
  polyloop show <dir> <runId> [--json]  show one run's trajectory step by step
  (after -- every argument is positional: polyloop show <dir> -- -run-id-with-dash)
exit codes: 0 ok, 1 missing directory or unknown run, 2 usage error, 3 corrupt log`;

const OBSERVATION_CHARS = 160;

/**
 * Run the CLI on `argv` (without `node` and the script) and return its exit code.
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  // After `--` every argument is positional, so a run id may start with a dash.
  const end = argv.indexOf('--');
  const flags = end === -1 ? argv : argv.slice(0, end);
  const json = flags.includes('--json');
  const args = [...flags.filter((a) => a !== '--json'), ...(end === -1 ? [] : argv.slice(end + 1))];
  const unknownFlag = flags.find((a) => a.startsWith('-') && a !== '-h' && a !== '--help' && a !== '--json');
  if (args.length === 0 || flags.includes('-h') || flags.includes('--help')) {
    (args.length === 0 ? io.err : io.out)(USAGE + '\n');
    return args.length === 0 ? EXIT.usage : EXIT.ok;
  }
  if (unknownFlag !== undefined) return usage(io, `unknown option ${unknownFlag}`);
  const [command, dir, runId, ...extra] = args;
  try {
    if (command === 'runs' && dir !== undefined && runId === undefined) return await runsCommand(dir, json, io);
    if (command === 'show' && dir !== undefined && runId !== undefined && extra.length === 0) return await showCommand(dir, runId, json, io);
  } catch (e) {
    if (e instanceof MissingDirectoryError) {
      io.err(`polyloop: ${e.message}\n`);
      return EXIT.notFound;
    }
    throw e;
  }
  return usage(io, command === 'runs' || command === 'show' ? `wrong arguments for ${command}` : `unknown command ${JSON.stringify(command)}`);
}

function usage(io: CliIo, problem: string): number {
  io.err(`polyloop: ${problem}\n${USAGE}\n`);
  return EXIT.usage;
}

async function runsCommand(dir: string, json: boolean, io: CliIo): Promise<number> {
  const runs = await listRuns(dir);
  const corrupt = runs.some((r) => r.error !== null);
  if (json) {
    io.out(JSON.stringify(runs.map(listingJson), null, 2) + '\n');
  } else if (runs.length === 0) {
    io.out(`no runs in ${dir}\n`);
  } else {
    const rows = runs.map((r) => [
      r.runId === null ? '(unknown id)' : clipId(oneLine(r.runId)),
      oneLine(r.summary ? describeStatus(r.summary.status) + (r.warnings.length > 0 ? ' (torn tail ignored)' : '') : `corrupt: ${r.error ?? ''}`),
      r.summary ? String(r.summary.steps) : '-',
      r.summary ? String(r.summary.validActions) : '-',
      r.lastWriteAt,
    ]);
    io.out(table(['RUN ID', 'STATUS', 'STEPS', 'VALID ACTIONS', 'LAST WRITE'], rows));
  }
  if (corrupt) io.err('polyloop: some logs are corrupt (see STATUS); they were left untouched\n');
  return corrupt ? EXIT.corrupt : EXIT.ok;
}

async function showCommand(dir: string, runId: string, json: boolean, io: CliIo): Promise<number> {
  const run = await inspectRun(dir, runId);
  if (run === null) {
    io.err(oneLine(`polyloop: no run ${JSON.stringify(runId)} in ${dir} (list them with: polyloop runs ${dir})`) + '\n');
    return EXIT.notFound;
  }
  if (run.summary === null) {
    io.err(oneLine(`polyloop: ${run.error ?? 'corrupt log'}`) + '\n');
    return EXIT.corrupt;
  }
  if (json) {
    io.out(JSON.stringify({ ...listingJson(run), trajectory: run.summary.trajectory }, null, 2) + '\n');
    return EXIT.ok;
  }
  const s = run.summary;
  const lines = [
    `run          ${runId}`,
    `file         ${run.file}`,
    `status       ${describeStatus(s.status)}`,
    `steps        ${s.steps} (valid actions ${s.validActions})`,
    `started      ${s.startedAt ?? '-'}`,
    `last write   ${run.lastWriteAt}`,
  ];
  if (s.finalAnswer !== null) lines.push(`final answer ${clip(oneLine(s.finalAnswer), 300)}`);
  for (const w of run.warnings) lines.push(`note         ${w}`);
  lines.push('');
  for (const step of s.trajectory) lines.push(...renderStep(step));
  const inFlight = s.status.state === 'in_flight' || s.status.state === 'running' ? s.status.inFlight : null;
  if (inFlight) lines.push(`#${inFlight.stepIndex}  … ${inFlight.intent === 'action' ? 'action' : 'model call'} ${inFlight.resultId} in flight (${inFlight.replayPolicy})`);
  // Ids and log contents are data, never terminal commands: every line is made terminal-safe.
  io.out(lines.map(oneLine).join('\n') + '\n');
  return EXIT.ok;
}

/** A step as terminal lines: header, then the observation or answer, indented. */
export function renderStep(step: StepRecord): string[] {
  const head = `#${step.stepIndex}  ${step.decision.padEnd(8)}`;
  switch (step.decision) {
    case 'action':
      return [
        `${head} ${clip(oneLine(step.actionRepr ?? ''), 100)}  [${step.actionStatus ?? '?'}]`,
        `      observation: ${clip(oneLine(step.observation ?? ''), OBSERVATION_CHARS)}${step.observationIsSynthetic ? ' (synthetic)' : ''}`,
      ];
    case 'final':
      return [`${head} answer: ${clip(oneLine(step.finalAnswer ?? ''), OBSERVATION_CHARS)}`];
    case 'invalid':
      return [`${head} ${clip(oneLine(step.explanation ?? ''), OBSERVATION_CHARS)}`];
    default:
      return [`${head} ${clip(oneLine(step.observation ?? step.explanation ?? ''), OBSERVATION_CHARS)}`];
  }
}

function listingJson(r: RunListing): Record<string, unknown> {
  const s = r.summary;
  return {
    runId: r.runId,
    file: r.file,
    lastWriteAt: r.lastWriteAt,
    status: s ? s.status.state : 'corrupt',
    stopReason: s?.status.state === 'ended' ? s.status.stopReason : null,
    inFlight: s?.status.state === 'in_flight' || s?.status.state === 'running' ? s.status.inFlight : null,
    driverPid: s?.status.state === 'running' ? s.status.pid : null,
    steps: s?.steps ?? null,
    validActions: s?.validActions ?? null,
    finalAnswer: s?.finalAnswer ?? null,
    error: r.error,
    warnings: r.warnings,
  };
}

/**
 * Characters a terminal acts on or that break or reorder what it shows: C0 and C1 controls (ESC,
 * 8-bit CSI), DEL, the Unicode line and paragraph separators, and bidirectional overrides.
 */
const TERMINAL_UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]/gu;

/** One terminal-safe line: newlines shown as ⏎, unsafe characters as `?`. */
function oneLine(text: string): string {
  return text.replace(/\r?\n/g, ' ⏎ ').replace(TERMINAL_UNSAFE, '?');
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}… (+${text.length - max + 1} chars)`;
}

function clipId(id: string): string {
  return id.length <= 40 ? id : `${id.slice(0, 39)}…`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (cells: readonly string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [fmt(header), ...rows.map(fmt)].join('\n') + '\n';
}
