/**
 * `polyloop import` reads at most 16 MiB (the Worker's import limit; `--max-bytes` moves it):
 * a larger file or stdin is refused before it is read whole, and nothing is imported.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeRecord, exportRun } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { started } from '../../contract/run-store.contract.ts';
import { runIn } from '../viewer/runs.ts';
import { sharedTempDirs } from '../../support/temp-dir.ts';
import { polyloop } from '../platform-node/helpers.ts';

const MIB = 1024 * 1024;
const LIMIT = 16 * MIB;
const BIN = join(import.meta.dirname, '../../../bin/polyloop.mjs');
const dirs = sharedTempDirs();
let work = '';
let small = '';
let ndjson = '';

/** A log-like file of `bytes` bytes (a run_started line, then filler lines), written a chunk at a time. */
async function oversized(file: string, bytes: number): Promise<void> {
  const out = createWriteStream(file);
  const head = `${encodeRecord(started('big'))}\n`;
  out.write(head);
  let left = bytes - Buffer.byteLength(head);
  const chunk = Buffer.alloc(MIB, 'x\n');
  while (left > 0) {
    const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
    left -= piece.length;
    if (!out.write(piece)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
}

beforeAll(async () => {
  work = await dirs.make('polyloop-import-limit-');
  // A real run of the library, to its end.
  await runIn(join(work, 'src'), 'finished-done');
  ndjson = await exportRun(new FileStore({ dir: join(work, 'src') }), 'finished-done');
  small = join(work, 'done.ndjson');
  const out = createWriteStream(small);
  out.end(ndjson);
  await once(out, 'close');
});

const entries = (dir: string): Promise<string[]> => readdir(dir).catch(() => []);

describe('polyloop import has a size limit', () => {
  it('refuses a file one byte over 16 MiB with exit 2 and what to do; nothing is imported, no directory made', async () => {
    const file = join(work, 'big.ndjson');
    await oversized(file, LIMIT + 1);
    expect((await stat(file)).size).toBe(LIMIT + 1);
    const dst = join(work, 'dst-big');
    const r = await polyloop(['import', dst, file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${file} is larger than ${LIMIT} bytes (16 MiB), the import limit: nothing was imported (--max-bytes <n> raises it)`,
    );
    expect(await entries(dst)).toEqual([]);
  }, 30_000);

  it('refuses stdin past the limit without reading it all: the writer is cut off, nothing is imported', async () => {
    const dst = join(work, 'dst-stdin');
    const child = spawn(process.execPath, [BIN, 'import', dst, '-'], { stdio: 'pipe' });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const closed = new Promise<number | null>((ok) => child.once('close', ok));
    child.stdin.on('error', () => undefined); // EPIPE once the reader stops: what the test wants
    const chunk = Buffer.alloc(MIB, 'x\n');
    let sent = 0;
    // Up to 64 MiB: far more than the limit, and never all of it if the reader stops at 16.
    while (sent < 64 * MIB && !child.stdin.destroyed && child.exitCode === null) {
      sent += chunk.length;
      // `once` rejects on the EPIPE that ends the writing: the loop's test then sees the pipe gone.
      if (!child.stdin.write(chunk)) await Promise.race([once(child.stdin, 'drain').catch(() => undefined), closed]);
    }
    child.stdin.end();
    expect(await closed).toBe(2);
    expect(sent).toBeLessThan(64 * MIB);
    expect(stderr).toContain(`stdin is larger than ${LIMIT} bytes (16 MiB), the import limit: nothing was imported`);
    expect(await entries(dst)).toEqual([]);
  }, 30_000);

  it('--max-bytes moves the limit: a log one byte over it is refused, a log of exactly that size imported', async () => {
    const size = Buffer.byteLength(ndjson);
    const [over, at] = await Promise.all([
      polyloop(['import', join(work, 'dst-over'), small, '--max-bytes', String(size - 1)]),
      polyloop(['import', join(work, 'dst-at'), small, '--max-bytes', String(size)]),
    ]);
    expect(over.code).toBe(2);
    expect(over.stderr).toContain(`is larger than ${size - 1} bytes, the import limit: nothing was imported`);
    expect(await entries(join(work, 'dst-over'))).toEqual([]);
    expect(at.stderr).toBe('');
    expect(at.code).toBe(0);
    expect(await exportRun(new FileStore({ dir: join(work, 'dst-at') }), 'finished-done')).toBe(ndjson);
  }, 30_000);

  it('--max-bytes takes a positive whole number of bytes, for import only', async () => {
    const results = await Promise.all([
      polyloop(['import', join(work, 'dst-x'), small, '--max-bytes', '16MiB']),
      polyloop(['import', join(work, 'dst-x'), small, '--max-bytes', '0']),
      polyloop(['import', join(work, 'dst-x'), small, '--max-bytes']),
      polyloop(['export', join(work, 'src'), 'finished-done', '--max-bytes', '10']),
    ]);
    expect(results.map((r) => r.code)).toEqual([2, 2, 2, 2]);
    expect(results[0]?.stderr).toContain('--max-bytes must be a whole number of bytes above 0, not 16MiB');
    expect(results[3]?.stderr).toContain('--max-bytes is an option of import only');
    expect(await entries(join(work, 'dst-x'))).toEqual([]);
  }, 30_000);
});
