/**
 * The run viewer over a FileStore directory: the run list, each run read with `readRunLog`
 * (cached by size and modification time, so a 50,000-step log is read once per change), its log
 * followed by polling the file, and — only with the user's agent — a reply or an upgrade carried
 * out through `resume` (view-reply.ts), the code path every other reply takes.
 * @module
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeRecord } from '../../core/index.ts';
import { inputReplyProblem } from '../../core/internal-entry.ts';
import type { InputReply, LogRecord } from '../../core/index.ts';
import { FileStore } from '../../platform-node/file-store.ts';
import { livePid, requireDirectory } from '../../platform-node/store-dir.ts';
import { readRegular } from '../../platform-node/regular-file.ts';
import { parseRunFileName } from '../../platform-node/run-id.ts';
import { dirStatus, readLogText, rowOf, stepsPage, summarizeRun } from './view-model.ts';
import type { LogReading, ViewRunRow } from './view-model.ts';
import { parentIdOf, replyRoute, treeOrder } from './run-tree.ts';
import type { ReplyRoute } from './run-tree.ts';
import { forkBody, forkInDir, stopBody, stopInDir } from './view-control.ts';
import type { ControlContext } from './view-control.ts';
import { messagesPage } from './view-messages.ts';
import { answerWith, checkViewerAgent, endStoppedWith, upgradeBody, upgradeWith } from './view-reply.ts';
import type { CarryContext, ViewerAgent } from './view-reply.ts';
import type { ViewAnswer, ViewSource } from './view-source.ts';
import { eventsAnswer, recordEventStream } from './view-source.ts';
import { ViewerDrives } from './view-turns.ts';

export type { AgentFactory, AgentForRun, ViewerAgent } from './view-reply.ts';

/** Options of {@link dirSource}. */
export type DirSourceOptions = {
  readonly dir: string;
  /**
   * The user's agent (its defaults give the tools and executor; its store is the FileStore on
   * `dir`), or the older factory of `{ agent, request }` per run. Without it the viewer writes
   * nothing and refuses replies (the page says why).
   */
  readonly agent?: ViewerAgent;
  /** How often a followed log is looked at (default 200 ms). */
  readonly pollMs?: number;
  /** Where a background drive that failed after its reply landed is told (default: stderr). */
  readonly log?: (line: string) => void;
};

const NO_AGENT =
  'this viewer was started without your agent (polyloop view <dir> --agent ./agent.mjs), ' +
  'so it cannot carry out a reply';

type Cached = { readonly key: string; readonly reading: LogReading };

/**
 * A {@link ViewSource} over a FileStore directory. Rejects with `MissingDirectoryError` when `dir`
 * is not one, `ViewerRefusedError` for an agent that cannot resume its runs.
 */
export async function dirSource(opts: DirSourceOptions): Promise<ViewSource> {
  await requireDirectory(opts.dir);
  if (opts.agent !== undefined) await checkViewerAgent(opts.agent, opts.dir);
  const store = new FileStore({ dir: opts.dir });
  const cache = new Map<string, Cached>();
  const answering = opts.agent ? { enabled: true, why: null } : { enabled: false, why: NO_AGENT };

  /** The file's reading, or null when there is no such file; an unreadable file is a reading with an error. */
  async function readFile(file: string): Promise<{ reading: LogReading; updatedAt: string } | null> {
    const s = await lstat(file).catch(() => null);
    if (!s) return null;
    const key = `${s.size}:${s.mtimeMs}`;
    const updatedAt = s.mtime.toISOString();
    const hit = cache.get(file);
    if (hit?.key === key) return { reading: hit.reading, updatedAt };
    let reading: LogReading;
    try {
      // Never through a link or into a FIFO (see regular-file.ts); a planted one reads as an error.
      const bytes = await readRegular(file);
      if (bytes === null) return null;
      reading = readBytes(bytes, file);
    } catch (e) {
      reading = {
        ...readLogText('', file),
        error: `cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`,
      };
    }
    cache.set(file, { key, reading });
    return { reading, updatedAt };
  }

  const readRun = (runId: string) => readFile(store.logPath(runId));
  const log = opts.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const drives = new ViewerDrives();
  const carrying = (runId: string): CarryContext => ({ dir: opts.dir, runId, readRun, log, drives });
  const statusOf = async (reading: LogReading, runId: string) =>
    dirStatus(reading, reading.error === null ? await livePid(store.logPath(runId)) : null);
  /** A sub-agent's run its parent waits on: where a reply to it goes (see run-tree.ts). */
  const routeOf = (runId: string): Promise<ReplyRoute | null> =>
    replyRoute(runId, async (id) => (await readRun(id))?.reading.view.openRequests ?? null);
  /** A reply or upgrade given to a sub-agent's run its parent waits on: refused, naming where it goes. */
  const throughParent = async (runId: string): Promise<ViewAnswer | null> => {
    const route = await routeOf(runId);
    if (route === null) return null;
    const message =
      `run ${JSON.stringify(runId)} is a sub-agent's run, and run ${JSON.stringify(route.runId)} waits on this ` +
      `request: reply to its request ${JSON.stringify(route.resultId)}, which carries the reply here`;
    return { status: 409, message };
  };

  /**
   * A stop or fork of run `runId`, or why not: no such run (404), a log that cannot be read
   * (409), a sub-agent's run (409: its parent carries it, so stop or fork the parent).
   */
  const controlOf = async (runId: string, what: string): Promise<ControlContext | ViewAnswer> => {
    const got = await readRun(runId);
    const id = JSON.stringify(runId);
    if (!got) return { status: 404, message: `no run ${id}` };
    if (got.reading.error !== null) return { status: 409, message: `run ${id} cannot be read: ${got.reading.error}` };
    const parent = parentIdOf(runId);
    if (parent !== null && (await readRun(parent)) !== null) {
      const parentId = JSON.stringify(parent);
      const message = `run ${id} is a sub-agent's run of run ${parentId}, which drives it: ${what} the parent`;
      return { status: 409, message };
    }
    const agent = opts.agent;
    return {
      dir: opts.dir,
      runId,
      store,
      read: async () => (await readRun(runId))?.reading ?? null,
      driverPid: () => livePid(store.logPath(runId)),
      endNow: agent === undefined ? null : () => endStoppedWith(agent, carrying(runId)),
    };
  };

  return {
    describe: { source: 'dir', where: opts.dir, answering },
    async list() {
      const rows: ViewRunRow[] = [];
      for (const name of (await readdir(opts.dir)).sort()) {
        const parsed = parseRunFileName(name);
        if (parsed === null) continue;
        const got = await readFile(join(opts.dir, name));
        const runId = parsed.form === 'reversible' ? parsed.runId : got?.reading.view.runId;
        if (!got || typeof runId !== 'string') continue;
        rows.push(rowOf(got.reading, runId, await statusOf(got.reading, runId), got.updatedAt));
      }
      rows.sort((a, b) => (b.updatedAt ?? '').localeCompare(a.updatedAt ?? ''));
      // A sub-agent's run right under its parent's (its id is the parent's and the parent's action).
      return treeOrder(rows, (r) => r.runId).map((t) => ({ ...t.row, parentRunId: t.parentRunId }));
    },
    async summary(runId) {
      const got = await readRun(runId);
      if (!got) return null;
      const parent = parentIdOf(runId);
      const parentRunId = parent !== null && (await readRun(parent)) !== null ? parent : null;
      return summarizeRun(got.reading, {
        runId,
        status: await statusOf(got.reading, runId),
        updatedAt: got.updatedAt,
        answering,
        parentRunId,
        replyTo: parentRunId === null ? null : await routeOf(runId),
      });
    },
    async steps(runId, from, limit, full) {
      const got = await readRun(runId);
      return got ? stepsPage(got.reading, from, limit, full) : null;
    },
    async messages(runId, step, from, limit) {
      const got = await readRun(runId);
      return got ? (messagesPage(got.reading, step, from, limit) ?? 'no_call') : null;
    },
    async log(runId) {
      const got = await readRun(runId);
      return got ? got.reading.records.map((r) => `${encodeRecord(r)}\n`).join('') : null;
    },
    async events(runId, afterSeq, signal) {
      const got = await readRun(runId);
      if (!got) return null;
      const records = got.reading.records;
      const refused = eventsAnswer(afterSeq, records.length - 1, records.at(-1)?.kind === 'run_ended');
      if (refused !== null) return refused;
      const poll = async (): Promise<readonly LogRecord[]> => (await readRun(runId))?.reading.records ?? [];
      return recordEventStream(poll, afterSeq, { signal, pollMs: opts.pollMs ?? 200 });
    },
    async answer(runId, raw) {
      const problem = inputReplyProblem(raw);
      if (problem !== null) return { status: 400, message: problem };
      if (!opts.agent) return { status: 409, message: NO_AGENT };
      if (!(await readRun(runId))) return { status: 404, message: `no run ${JSON.stringify(runId)}` };
      return (await throughParent(runId)) ?? answerWith(opts.agent, carrying(runId), raw as InputReply);
    },
    async upgrade(runId, raw) {
      const body = upgradeBody(raw);
      if (typeof body === 'string') return { status: 400, message: body };
      if (!opts.agent) return { status: 409, message: NO_AGENT.replace('carry out a reply', 'upgrade a run') };
      if (!(await readRun(runId))) return { status: 404, message: `no run ${JSON.stringify(runId)}` };
      return (await throughParent(runId)) ?? upgradeWith(opts.agent, carrying(runId), body);
    },
    async stop(runId, raw) {
      const body = stopBody(raw);
      if (typeof body === 'string') return { status: 400, message: body };
      const ctx = await controlOf(runId, 'stop');
      return 'status' in ctx ? ctx : stopInDir(ctx, body);
    },
    async fork(runId, raw) {
      const body = forkBody(raw);
      if (typeof body === 'string') return { status: 400, message: body };
      const ctx = await controlOf(runId, 'fork');
      return 'status' in ctx ? ctx : forkInDir(ctx, body);
    },
  };
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });
const LENIENT_UTF8 = new TextDecoder('utf-8');

/** A log's bytes read as text; bytes that are not UTF-8 are shown as U+FFFD, and the reading says so. */
function readBytes(bytes: Uint8Array, file: string): LogReading {
  try {
    return readLogText(STRICT_UTF8.decode(bytes), file);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    const reading = readLogText(LENIENT_UTF8.decode(bytes), file);
    return {
      ...reading,
      warnings: [...reading.warnings, 'the log is not valid UTF-8: the bytes that are not were shown as U+FFFD'],
    };
  }
}
