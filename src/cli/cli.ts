/**
 * The `polyloop` command: inspect, export and import FileStore run logs from a terminal, stop a
 * run and fork one from a step.
 * Run by `bin/polyloop.mjs` from `dist/cli/cli.js`; not part of `polyloop/node`.
 * @module
 */
import { isPolyLoopError } from '../core/index.ts';
import type { RunLogView } from '../core/index.ts';
import { MissingDirectoryError } from '../platform-node/store-dir.ts';
import { hasRun, inspectRun, listRuns } from './inspect.ts';
import type { RunListing } from './inspect.ts';
import {
  childrenLine,
  clip,
  clipId,
  escapeRawForTerminal,
  EXIT,
  oneLine,
  renderInFlight,
  renderPending,
  renderStep,
  stateLine,
  table,
  viewJson,
} from './render.ts';
import type { CliIo } from './render.ts';
import { forkCommand, stopCommand } from './control-commands.ts';
import { exportCommand, importCommand, MAX_IMPORT_BYTES } from './transfer.ts';
import { parentIdOf, replyRoute, treeOrder } from '../viewer/server/run-tree.ts';
import { resumeLines, resumeSummaries } from '../viewer/server/resumes.ts';
import { upgradeLine, upgradeSummaries } from '../viewer/server/upgrades.ts';
import { viewCommand } from './view-command.ts';

const USAGE = `usage:
  polyloop runs <dir> [--json]              list the runs in a FileStore directory and where each stands
                                            (a sub-agent's run under its parent's, marked └)
  polyloop show <dir> <runId> [--json]      show one run's trajectory step by step (upgrades where they
                                            took effect, where a later driver took the run over) and its state
  polyloop export <dir> <runId> [-o <file>] write a run's log as NDJSON to stdout (or to <file>)
  polyloop import <dir> <file>              import an exported log (<file> - reads stdin) under its run id;
                                            at most 16 MiB unless --max-bytes <n> says otherwise
  polyloop stop <dir> <runId> [reason]      ask the run to stop, wherever it is driven: it ends cancelled
                                            (with the reason) now, or at its next resume if no process drives it
  polyloop fork <dir> <runId> <step> <newRunId>
                                            a new run holding the steps before <step>; resuming it asks the
                                            model again at <step> (a step awaiting approval: the same request)
  polyloop view <dir> [--agent <module>]    a web page over the runs in <dir> (loopback, prints its URL);
                                            with --agent (a module exporting your agent) its buttons answer
                                            approvals and upgrade runs (docs/viewer.md)
  polyloop view --url <worker> --token <t>  the same page over a PolyLoop Worker (the token stays server-side)
       view options: --port <n> (default: a free one), --host <addr> (non-loopback needs --allow-remote)
  polyloop help                             this text (also --help, -h)
  (after -- every argument is positional: polyloop show <dir> -- -run-id-with-dash)
exit codes: 0 ok, 1 missing directory, unknown run or a run that already exists,
            2 usage error (a step a run cannot be forked at, too long a stop reason) or an import over its
            size limit, 3 corrupt log or unsupported schema version`;

/** Parsed command line: positional arguments and the options every command may take. */
export type Args = {
  readonly positional: readonly string[];
  readonly json: boolean;
  readonly output: string | null;
  readonly help: boolean;
  /** `--max-bytes <n>` (import): the most bytes read from its file or stdin; null: the default. */
  readonly maxBytes: number | null;
};

/** Parse `argv`; a string is the usage problem. A lone `-` is positional (stdin). */
export function parseArgs(argv: readonly string[]): Args | string {
  const positional: string[] = [];
  let json = false;
  let output: string | null = null;
  let help = false;
  let maxBytes: number | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (a === '--json') json = true;
    else if (a === '-h' || a === '--help') help = true;
    else if (a === '-o' || a === '--output') {
      const value = argv[++i];
      if (value === undefined) return `${a} needs a file`;
      output = value;
    } else if (a === '--max-bytes') {
      const value = argv[++i];
      if (value === undefined) return `${a} needs a number of bytes`;
      if (!/^\d{1,15}$/.test(value) || Number(value) === 0) {
        return `--max-bytes must be a whole number of bytes above 0, not ${value}`;
      }
      maxBytes = Number(value);
    } else if (a.startsWith('-') && a !== '-') return `unknown option ${a}`;
    else positional.push(a);
  }
  return { positional, json, output, help, maxBytes };
}

/**
 * Run the CLI on `argv` (without `node` and the script) and return its exit code.
 *
 * @example
 * const io = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };
 * process.exitCode = await runCli(process.argv.slice(2), io);
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  // `view` has options of its own (--port, --host, --url, …) and serves until stopped.
  if (argv[0] === 'view' && !argv.slice(1).some((a) => a === '-h' || a === '--help'))
    return viewCommand(argv.slice(1), io);
  const args = parseArgs(argv);
  if (typeof args === 'string') return usage(io, args);
  // `help` as a command too: a newcomer types `polyloop help` as often as `--help`.
  if (args.help || args.positional[0] === 'help') {
    io.out(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (args.positional.length === 0) {
    io.err(`${USAGE}\n`);
    return EXIT.usage;
  }
  const [command, dir, arg, ...extra] = args.positional;
  if (!Object.hasOwn(SYNOPSIS, command as string)) return usage(io, `unknown command ${JSON.stringify(command)}`);
  if (dir === undefined || !arityFits(command as string, args.positional.length - 1))
    return usage(io, `wrong arguments for ${command}: ${SYNOPSIS[command as keyof typeof SYNOPSIS]}`);
  if (args.output !== null && command !== 'export') return usage(io, `-o is an option of export only`);
  if (args.maxBytes !== null && command !== 'import') return usage(io, `--max-bytes is an option of import only`);
  if (args.json && command !== 'runs' && command !== 'show') return usage(io, `--json is not an option of ${command}`);
  try {
    if (command === 'stop') return await stopCommand(dir, arg as string, extra[0], io);
    if (command === 'fork') return await forkCommand(dir, arg as string, extra[0] as string, extra[1] as string, io);
    if (command === 'runs') return await runsCommand(dir, args.json, io);
    if (command === 'show') return await showCommand(dir, arg as string, args.json, io);
    if (command === 'export') return await exportCommand(dir, arg as string, args.output, io);
    return await importCommand(dir, arg as string, io, args.maxBytes ?? MAX_IMPORT_BYTES);
  } catch (e) {
    if (e instanceof MissingDirectoryError) {
      io.err(`${oneLine(`polyloop: ${e.message}`)}\n`);
      return EXIT.notFound;
    }
    if (isPolyLoopError(e)) {
      // Whatever the log said is data: the message reaches the terminal only made safe.
      io.err(`${oneLine(`polyloop: ${e.message}`)}\n`);
      return isPolyLoopError(e, 'corrupt_log') || isPolyLoopError(e, 'schema_version') ? EXIT.corrupt : EXIT.notFound;
    }
    throw e;
  }
}

/** What each command takes, for the line that says its arguments were wrong. */
const SYNOPSIS = {
  runs: 'polyloop runs <dir>',
  show: 'polyloop show <dir> <runId>',
  export: 'polyloop export <dir> <runId>',
  import: 'polyloop import <dir> <file>',
  stop: 'polyloop stop <dir> <runId> [reason]',
  fork: 'polyloop fork <dir> <runId> <step> <newRunId>',
} as const;

/** Whether a command has the number of arguments it takes (after the command's name). */
function arityFits(command: string, n: number): boolean {
  if (command === 'runs') return n === 1;
  if (command === 'stop') return n === 2 || n === 3;
  if (command === 'fork') return n === 4;
  return n === 2;
}

function usage(io: CliIo, problem: string): number {
  io.err(`polyloop: ${oneLine(problem)}\n${USAGE}\n`);
  return EXIT.usage;
}

async function runsCommand(dir: string, json: boolean, io: CliIo): Promise<number> {
  const runs = await listRuns(dir);
  const corrupt = runs.some((r) => r.error !== null);
  // A sub-agent's run right under its parent's (its id is the parent's and the parent's action).
  const tree = treeOrder(runs, (r) => r.runId);
  if (json) {
    io.out(
      jsonOut(
        tree.map((t) => listingJson(t.row, t.parentRunId)),
        io,
      ),
    );
  } else if (runs.length === 0) {
    io.out(`${oneLine(`no runs in ${dir}`)}\n`);
  } else {
    const rows = tree.map(({ row: r, depth }) => [
      (depth === 0 ? '' : `${'  '.repeat(depth - 1)}└ `) +
        (r.runId === null ? '(unknown id)' : clipId(oneLine(r.runId))),
      oneLine(r.view ? stateCell(r.view, r.driverPid, r.warnings) : `corrupt: ${r.error ?? ''}`),
      r.view ? String(r.view.steps) : '-',
      r.view ? String(r.view.validActions) : '-',
      r.lastWriteAt,
    ]);
    io.out(table(['RUN ID', 'STATE', 'STEPS', 'VALID ACTIONS', 'LAST WRITE'], rows));
  }
  if (corrupt) io.err('polyloop: some logs are corrupt (see STATE); they were left untouched\n');
  return corrupt ? EXIT.corrupt : EXIT.ok;
}

/** The runs table's STATE: where the run stands, a torn tail ignored, how often it was upgraded. */
function stateCell(view: RunLogView, driverPid: number | null, warnings: readonly string[]): string {
  const n = view.upgrades.length;
  const upgraded = n === 0 ? '' : `; upgraded ${n === 1 ? 'once' : `${n} times`}`;
  return stateLine(view, driverPid) + (warnings.length > 0 ? ' (torn tail ignored)' : '') + upgraded;
}

async function showCommand(dir: string, runId: string, json: boolean, io: CliIo): Promise<number> {
  const run = await inspectRun(dir, runId);
  if (run === null) {
    io.err(
      `${oneLine(`polyloop: no run ${JSON.stringify(runId)} in ${dir} (list them with: polyloop runs ${dir})`)}\n`,
    );
    return EXIT.notFound;
  }
  if (run.view === null) {
    io.err(`${oneLine(`polyloop: ${run.error ?? 'corrupt log'}`)}\n`);
    return EXIT.corrupt;
  }
  const view = run.view;
  const parent = parentIdOf(runId);
  const parentRunId = parent !== null && (await hasRun(dir, parent)) ? parent : null;
  if (json) {
    io.out(jsonOut({ ...listingJson(run, parentRunId), trajectory: view.trajectory }, io));
    return EXIT.ok;
  }
  const lines = [
    `run          ${runId}`,
    ...(parentRunId === null
      ? []
      : [`parent       ${parentRunId} (sub-agent run of its step ${runId.slice(parentRunId.length + 1)})`]),
    `file         ${run.file}`,
    `state        ${stateLine(view, run.driverPid)}`,
    `steps        ${view.steps} (valid actions ${view.validActions})`,
    `started      ${view.started?.startedAt ?? '-'}`,
    `last write   ${run.lastWriteAt}`,
  ];
  const answer = view.ended?.finalAnswer ?? null;
  if (answer !== null) lines.push(`final answer ${clip(oneLine(answer), 300)}`);
  for (const p of view.openRequests) lines.push(...renderPending(p));
  for (const w of run.warnings) lines.push(`note         ${w}`);
  if (parentRunId !== null) lines.push(...(await replyThrough(dir, runId)));
  lines.push('', ...childrenLine(view));
  // Each upgrade where it took effect (before the first step run under the new identity), then
  // where a later driver took the run over (before the first step it carried out).
  const upgrades = upgradeSummaries(view);
  const resumes = resumeSummaries(view);
  const markLines = (at: (stepIndex: number) => boolean): string[] => [
    ...upgrades.filter((u) => at(u.stepIndex)).map(upgradeLine),
    ...resumeLines(resumes.filter((r) => at(r.stepIndex))),
  ];
  for (const step of view.trajectory) lines.push(...markLines((i) => i === step.stepIndex), ...renderStep(step));
  lines.push(...markLines((i) => i >= view.trajectory.length));
  if (view.inFlight) lines.push(...renderInFlight(view.inFlight));
  // Ids and log contents are data, never terminal commands: every line is made terminal-safe.
  io.out(`${lines.map(oneLine).join('\n')}\n`);
  return EXIT.ok;
}

/** Where a reply to a sub-agent run's request goes: the topmost parent waiting on it (no line if none). */
async function replyThrough(dir: string, runId: string): Promise<string[]> {
  const route = await replyRoute(runId, async (id) => (await inspectRun(dir, id))?.view?.openRequests ?? null);
  if (route === null) return [];
  return [
    `note         run ${route.runId} waits on this request: ` +
      `reply to its request ${route.resultId} (it carries the reply here)`,
  ];
}

/** `--json` output; on a terminal, what JSON leaves raw and a terminal acts on is shown escaped (the same JSON). */
function jsonOut(value: unknown, io: CliIo): string {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  return io.outIsTerminal ? escapeRawForTerminal(text) : text;
}

/** A run's JSON row; `parentRunId`: the run whose sub-agent it is, when that run is in the directory. */
function listingJson(r: RunListing, parentRunId: string | null): Record<string, unknown> {
  const derived = r.view
    ? viewJson(r.view, r.driverPid)
    : {
        state: 'corrupt',
        stateLine: `corrupt: ${r.error ?? ''}`,
        stopReason: null,
        inFlight: null,
        pending: null,
        openRequests: [],
        driverPid: null,
        steps: null,
        validActions: null,
        children: [],
      };
  const upgrades = r.view ? upgradeSummaries(r.view) : null;
  const resumes = r.view ? resumeSummaries(r.view) : null;
  const { runId, file, lastWriteAt, error, warnings } = r;
  return { runId, parentRunId, file, lastWriteAt, ...derived, upgrades, resumes, error, warnings };
}
