/**
 * The run viewer over a FileStore directory: the run list, each run read with `readRunLog`
 * (cached by size and modification time, so a 50,000-step log is read once per change), its log
 * followed by polling the file, and — only with the user's agent — a reply carried out through
 * `resume(agent, request, { input })`, the code path every other reply takes.
 * @module
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeRecord, inputReplyProblem, isPolyLoopError, resume } from '../core/index.ts';
import type { AgentDefinition, InputReply, LogRecord, PolyLoopErrorCode, RunRequest } from '../core/index.ts';
import { FileStore } from './file-store.ts';
import { livePid, requireDirectory } from './inspect.ts';
import { readRegular } from './regular-file.ts';
import { parseRunFileName } from './run-id.ts';
import { dirStatus, readLogText, rowOf, stepsPage, summarizeRun } from './view-model.ts';
import type { LogReading, ViewRunRow } from './view-model.ts';
import type { ViewAnswer, ViewSource } from './view-source.ts';
import { eventsRefusal, recordEventStream } from './view-source.ts';

/** What the user's agent module gives for a run: the definition and the request `resume` needs. */
export type AgentForRun = { readonly agent: AgentDefinition; readonly request: RunRequest };

/** The user's agent module's default export: the agent and request of a run in `dir`. */
export type AgentFactory = (ctx: { readonly runId: string; readonly dir: string }) => AgentForRun | Promise<AgentForRun>;

/** Options of {@link dirSource}. */
export type DirSourceOptions = {
  readonly dir: string;
  /** The user's agent; without it the viewer writes nothing and refuses replies (the page says why). */
  readonly agent?: AgentFactory;
  /** How often a followed log is looked at (default 200 ms). */
  readonly pollMs?: number;
  /** Where a background drive that failed after its reply landed is told (default: stderr). */
  readonly log?: (line: string) => void;
};

const NO_AGENT = 'this viewer was started without your agent (polyloop view <dir> --agent ./agent.mjs), so it cannot carry out a reply';

type Cached = { readonly key: string; readonly reading: LogReading };

/** A {@link ViewSource} over a FileStore directory. Rejects with `MissingDirectoryError` when `dir` is not one. */
export async function dirSource(opts: DirSourceOptions): Promise<ViewSource> {
  await requireDirectory(opts.dir);
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
      reading = { ...readLogText('', file), error: `cannot read ${file}: ${e instanceof Error ? e.message : String(e)}` };
    }
    cache.set(file, { key, reading });
    return { reading, updatedAt };
  }

  const readRun = (runId: string) => readFile(store.logPath(runId));
  const statusOf = async (reading: LogReading, runId: string) => dirStatus(reading, reading.error === null ? await livePid(store.logPath(runId)) : null);

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
      return rows.sort((a, b) => (b.updatedAt ?? '').localeCompare(a.updatedAt ?? ''));
    },
    async summary(runId) {
      const got = await readRun(runId);
      if (!got) return null;
      return summarizeRun(got.reading, { runId, status: await statusOf(got.reading, runId), updatedAt: got.updatedAt, answering });
    },
    async steps(runId, from, limit, full) {
      const got = await readRun(runId);
      return got ? stepsPage(got.reading, from, limit, full) : null;
    },
    async log(runId) {
      const got = await readRun(runId);
      return got ? got.reading.records.map((r) => `${encodeRecord(r)}\n`).join('') : null;
    },
    async events(runId, afterSeq, signal) {
      const got = await readRun(runId);
      if (!got) return null;
      const records = got.reading.records;
      const refused = eventsRefusal(afterSeq, records.length - 1, records.at(-1)?.kind === 'run_ended');
      if (refused !== null) return refused;
      const poll = async (): Promise<readonly LogRecord[]> => (await readRun(runId))?.reading.records ?? [];
      return recordEventStream(poll, afterSeq, { signal, pollMs: opts.pollMs ?? 200 });
    },
    async answer(runId, raw) {
      const problem = inputReplyProblem(raw);
      if (problem !== null) return { status: 400, message: problem };
      if (!opts.agent) return { status: 409, message: NO_AGENT };
      const got = await readRun(runId);
      if (!got) return { status: 404, message: `no run ${JSON.stringify(runId)}` };
      return answerWith(opts.agent, { dir: opts.dir, runId, reply: raw as InputReply, readRun, log: opts.log ?? ((l) => process.stderr.write(l + '\n')) });
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
    return { ...reading, warnings: [...reading.warnings, 'the log is not valid UTF-8: the bytes that are not were shown as U+FFFD'] };
  }
}

type AnswerContext = {
  readonly dir: string;
  readonly runId: string;
  readonly reply: InputReply;
  readonly readRun: (runId: string) => Promise<{ reading: LogReading } | null>;
  readonly log: (line: string) => void;
};

/**
 * Carry out `reply` with the user's agent: `resume` checks it against the open request (writing
 * nothing when it does not fit) and writes it as a barrier before carrying it out. The answer goes
 * out once the reply is in the log (202) or resume refused it; the run then goes on in the
 * background, as long as it needs (to its end or its next question).
 */
async function answerWith(factory: AgentFactory, ctx: AnswerContext): Promise<ViewAnswer> {
  let made: AgentForRun;
  try {
    made = await factory({ runId: ctx.runId, dir: ctx.dir });
  } catch (e) {
    return { status: 500, message: `your agent module failed for run ${JSON.stringify(ctx.runId)}: ${e instanceof Error ? e.message : String(e)}` };
  }
  const replies = async (): Promise<readonly LogRecord[]> =>
    ((await ctx.readRun(ctx.runId))?.reading.records ?? []).filter((r) => r.kind === 'input' && r.resultId === ctx.reply.resultId);
  // A reply already in the log (the run went on) must not read as this one landing, nor may
  // another person's reply that lands while this one waits for the run's lock.
  const before = (await replies()).length;
  const mine = sameJson(ctx.reply);
  const driving = resume(made.agent, made.request, { input: ctx.reply }).then(
    () => null,
    (e: unknown) => e,
  );
  for (;;) {
    const settled = await Promise.race([driving.then((e) => ({ e })), new Promise<null>((ok) => setTimeout(ok, 50, null))]);
    // resume refuses before it writes: such a refusal is this reply's answer whatever else landed.
    if (settled !== null && isRefusal(settled.e)) return refusal(settled.e, ctx);
    const landed = (await replies()).slice(before).some((r) => r.kind === 'input' && mine(r.reply));
    if (settled !== null && !landed) return refusal(settled.e, ctx);
    if (landed) {
      void driving.then((e) => {
        if (e !== null) ctx.log(`polyloop view: run ${JSON.stringify(ctx.runId)} failed after the reply landed: ${e instanceof Error ? e.message : String(e)}`);
      });
      return { status: 202, message: 'the reply is in the log; the run goes on', body: { runId: ctx.runId, resultId: ctx.reply.resultId } };
    }
  }
}

/** A test of whether a value is `value` as JSON, whatever the order of object keys. */
function sameJson(value: unknown): (other: unknown) => boolean {
  const canon = (v: unknown): unknown =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, x]) => [k, canon(x)])) : Array.isArray(v) ? v.map(canon) : v;
  const text = JSON.stringify(canon(value));
  return (other) => JSON.stringify(canon(other)) === text;
}

const REFUSALS: readonly PolyLoopErrorCode[] = ['invalid_input', 'run_locked', 'run_identity_mismatch', 'invalid_request'];

/** Whether resume refused the reply before writing anything (it did not fit, or another driver holds the run). */
function isRefusal(e: unknown): boolean {
  return REFUSALS.some((code) => isPolyLoopError(e, code));
}

/** Why resume wrote nothing, as an HTTP answer: a reply that does not fit is a 409 (or 400 for a kind not accepted). */
function refusal(e: unknown, ctx: AnswerContext): ViewAnswer {
  const message = e instanceof Error ? e.message : String(e);
  if (e === null) return { status: 409, message: 'the run went on without this reply' };
  if (isPolyLoopError(e, 'invalid_input')) return { status: /accepts/.test(message) ? 400 : 409, message };
  if (isPolyLoopError(e, 'run_locked')) return { status: 409, message: `another process drives run ${JSON.stringify(ctx.runId)}: ${message}` };
  if (isPolyLoopError(e, 'run_identity_mismatch') || isPolyLoopError(e, 'invalid_request')) return { status: 400, message: `your agent module does not fit this run: ${message}` };
  return { status: 500, message };
}
