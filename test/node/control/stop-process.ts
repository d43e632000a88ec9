/**
 * A second process for the FileStore stop tests (file-store-stop.test.ts runs it bundled by
 * esbuild; `node --import tsx` runs it as it is). Each prints one line per thing that happened:
 *
 *   stop-process.ts <dir> <runId> hold
 *     takes the run's lease, prints `HELD`, waits for its `lost` signal, prints `LOST <json>`
 *     (the reason's name, code and stop), releases and exits.
 *   stop-process.ts <dir> <runId> idle
 *     takes the run's lease, prints `HELD` and does nothing more: the process must end by itself.
 *   stop-process.ts <dir> <runId> request [reason]
 *     `requestStop(store, runId, reason)`, prints `REQUESTED` and exits.
 */
import { writeSync } from 'node:fs';
import { requestStop } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';

const [dir, runId, command, reason] = process.argv.slice(2);
if (!dir || !runId || !['hold', 'idle', 'request'].includes(command ?? ''))
  throw new Error('usage: stop-process.ts <dir> <runId> hold | idle | request [reason]');
const store = new FileStore({ dir, onWarning: () => undefined });
const say = (line: string): void => void writeSync(1, `${line}\n`);

if (command === 'request') {
  await requestStop(store, runId, reason);
  say('REQUESTED');
} else {
  const release = await store.acquire(runId, {});
  say('HELD');
  if (command === 'hold') {
    // The lease's own timer is unref'd: this process waits on purpose, so it keeps itself alive.
    const alive = setInterval(() => undefined, 60_000);
    const lost = release.lost as AbortSignal;
    const why = await new Promise<unknown>((done) => {
      if (lost.aborted) done(lost.reason);
      lost.addEventListener('abort', () => done(lost.reason), { once: true });
    });
    const { name, code, stop } = why as { name?: string; code?: string; stop?: unknown };
    say(`LOST ${JSON.stringify({ name, code, stop })}`);
    await release();
    clearInterval(alive);
  }
}
