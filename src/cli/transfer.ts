/**
 * `polyloop export` and `polyloop import` (docs/design/run-log.md#export-and-import): a FileStore
 * run's log as NDJSON, and an exported log written into a FileStore directory through the store's
 * own methods.
 * @module
 */
import { createReadStream } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import {
  CorruptLogError,
  decodeLog,
  decodeRecord,
  exportRun,
  importRun,
  isPolyLoopError,
  readRunLog,
} from '../core/index.ts';
import type { RunExistsError } from '../core/index.ts';
import { decodeLogText, FileStore } from '../platform-node/file-store.ts';
import { atSource, requireEncodable } from './inspect.ts';
import { requireDirectory } from '../platform-node/store-dir.ts';
import { errCode } from '../platform-node/lock.ts';
import { escapeRawForTerminal, EXIT, oneLine, stateLine } from './render.ts';
import type { CliIo } from './render.ts';

/** Write the run's NDJSON to stdout or `output`. A torn last line the store dropped is noted on stderr. */
export async function exportCommand(dir: string, runId: string, output: string | null, io: CliIo): Promise<number> {
  await requireDirectory(dir);
  const store = new FileStore({ dir, onWarning: (w) => io.err(`${oneLine(`polyloop: note: ${w.message}`)}\n`) });
  let ndjson: string;
  try {
    ndjson = await exportRun(store, runId).catch(async (e: unknown) => {
      // A value nested deeper than JSON.stringify goes: name its line, as for any corrupt log.
      if (e instanceof RangeError)
        requireEncodable(await new FileStore({ dir, onWarning: () => undefined }).readLog(runId), store.logPath(runId));
      throw e;
    });
  } catch (e) {
    if (isPolyLoopError(e, 'run_not_found')) {
      io.err(
        `${oneLine(`polyloop: no run ${JSON.stringify(runId)} in ${dir} (list them with: polyloop runs ${dir})`)}\n`,
      );
      return EXIT.notFound;
    }
    if (isPolyLoopError(e, 'schema_version')) return schemaProblem(store.logPath(runId), e, io);
    throw isPolyLoopError(e, 'corrupt_log') ? atSource(e as CorruptLogError, store.logPath(runId)) : e;
  }
  // Written whole once the export succeeded: a failed export leaves no half file behind.
  if (output !== null) await writeFile(output, ndjson);
  // Inside a JSON string a \u escape decodes to the same character, so what a terminal shows is
  // still the same log; piped or redirected output gets exportRun's bytes untouched.
  else io.out(io.outIsTerminal ? escapeRawForTerminal(ndjson) : ndjson);
  return EXIT.ok;
}

/**
 * The most bytes `polyloop import` reads unless `--max-bytes` says otherwise: 16 MiB, what a
 * Worker accepts as an imported log (`POST /runs` with `log`), so a log moves either way.
 */
export const MAX_IMPORT_BYTES = 16 * 1024 * 1024;

const MIB = 1024 * 1024;

/**
 * Import an exported log (`file`, or `-` for stdin) into `dir` under the run id its first
 * record names; `dir` is created if missing, like any FileStore's. Prints what was imported.
 * More than `maxBytes` is refused (exit 2) once that many are read, before anything is written.
 */
export async function importCommand(
  dir: string,
  file: string,
  io: CliIo,
  maxBytes = MAX_IMPORT_BYTES,
): Promise<number> {
  const source = file === '-' ? 'stdin' : file;
  const bytes = file === '-' ? await readStdinCapped(io, maxBytes) : await readInput(file, maxBytes, io);
  if (bytes === null) return EXIT.notFound;
  if (bytes === TOO_LARGE) {
    const limit = `${maxBytes} bytes${maxBytes % MIB === 0 ? ` (${maxBytes / MIB} MiB)` : ''}`;
    const raise = '--max-bytes <n> raises it';
    const what = `${source} is larger than ${limit}, the import limit: nothing was imported (${raise})`;
    io.err(`${oneLine(`polyloop: ${what}`)}\n`);
    return EXIT.usage;
  }
  await refuseNonDirectory(dir);
  try {
    const text = decodeLogText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), source);
    const runId = runIdOf(text);
    // Refused before anything is written: a record no store can encode would leave a partial log.
    requireEncodable(decodeLog(text, { source }).records, source);
    const store = new FileStore({ dir, onWarning: (w) => io.err(`${oneLine(`polyloop: note: ${w.message}`)}\n`) });
    await importRun(store, runId, text);
    const records = await store.readLog(runId);
    io.out(
      `${oneLine(
        `imported run ${JSON.stringify(runId)} into ${store.logPath(runId)} ` +
          `(${records.length} records): ${stateLine(readRunLog(records), null)}`,
      )}\n`,
    );
    return EXIT.ok;
  } catch (e) {
    if (isPolyLoopError(e, 'run_exists')) {
      io.err(
        `${oneLine(
          `polyloop: run ${JSON.stringify((e as RunExistsError).runId)} already has a log in ${dir}; ` +
            'nothing was imported',
        )}\n`,
      );
      return EXIT.notFound;
    }
    if (isPolyLoopError(e, 'schema_version')) return schemaProblem(source, e, io);
    throw isPolyLoopError(e, 'corrupt_log') ? atSource(e as CorruptLogError, source) : e;
  }
}

/** A log of a schema this library cannot read: named, exit 3 (its version is in the message). */
function schemaProblem(source: string, e: Error, io: CliIo): number {
  io.err(`${oneLine(`polyloop: ${source}: ${e.message}`)}\n`);
  return EXIT.corrupt;
}

/** The run id `run_started` names: the log's first line, which importRun then checks with the rest. */
function runIdOf(text: string): string {
  const end = text.indexOf('\n');
  const first = decodeRecord(end === -1 ? text : text.slice(0, end));
  if (first.kind !== 'run_started') throw new CorruptLogError(1, `first record is ${first.kind}, not run_started`);
  return first.runId;
}

/** What a capped read gives for an input over its limit. */
const TOO_LARGE = Symbol('too large');

/** Every byte of `chunks`, or TOO_LARGE as soon as there are more than `max` (the rest is not read). */
async function readCapped(chunks: AsyncIterable<Uint8Array>, max: number): Promise<Uint8Array | typeof TOO_LARGE> {
  const kept: Uint8Array[] = [];
  let size = 0;
  // Leaving the loop early closes the stream: a file is closed, stdin's writer sees the pipe close.
  for await (const chunk of chunks) {
    size += chunk.byteLength;
    if (size > max) return TOO_LARGE;
    kept.push(chunk);
  }
  return Buffer.concat(kept, size);
}

async function readInput(file: string, max: number, io: CliIo): Promise<Uint8Array | typeof TOO_LARGE | null> {
  try {
    // A regular file's size says it at once; the capped read still guards one that grows, or a pipe.
    if ((await stat(file)).size > max) return TOO_LARGE;
    return await readCapped(createReadStream(file), max);
  } catch (e) {
    io.err(
      `${oneLine(
        `polyloop: cannot read ${file}: ` +
          (errCode(e) === 'ENOENT' ? 'no such file' : e instanceof Error ? e.message : String(e)),
      )}\n`,
    );
    return null;
  }
}

/** A `dir` that exists must be a directory; a missing one is created by the store. */
async function refuseNonDirectory(dir: string): Promise<void> {
  const missing = await stat(dir).then(
    () => false,
    (e: unknown) => errCode(e) === 'ENOENT',
  );
  if (!missing) await requireDirectory(dir);
}

/** Standard input up to `max` bytes (the `io.stdin` of a test is read whole, then measured). */
async function readStdinCapped(io: CliIo, max: number): Promise<Uint8Array | typeof TOO_LARGE> {
  if (io.stdin === undefined) return readCapped(process.stdin, max);
  const bytes = await io.stdin();
  return bytes.byteLength > max ? TOO_LARGE : bytes;
}
