/**
 * The traced child of the power-loss explorer: one uninterrupted run of the power agent on a
 * FileStore. After each store write resolves it appends `ACK <n> <method> <barrier|plain>` to
 * the acks file with a synchronous write (`n`: the index of the write's last record in the log;
 * `barrier` when FileStore had to make it durable: `isBarrier`, and `resultAndIntent` always),
 * so the trace shows when every write was acknowledged; it prints each model call
 * (`CALL <callSeq> <hash>`) and the result (`RESULT <json>`) on stdout.
 *
 * With `lazy`, barriers are written without fsync (a FileStore whose every append is a plain one):
 * a broken store the explorer must catch (its negative control).
 *
 * Usage: node power-child.mjs <storeDir> <world> <acks> <steps> <safe|never> [lazy]
 */
import { openSync, writeSync } from 'node:fs';
import { isBarrier, run } from '../../../../src/core/index.ts';
import type { LogRecord, RunStore } from '../../../../src/core/index.ts';
import type { LogAppend } from '../../../../src/core/internal-entry.ts';
import { FileStore } from '../../../../src/platform-node/index.ts';
import { powerAgent } from './power-agent.ts';

const [dir, world, acks, stepsArg, policy, lazyArg] = process.argv.slice(2);
if (!dir || !world || !acks || !stepsArg || (policy !== 'safe' && policy !== 'never')) {
  throw new Error('usage: power-child.mjs <storeDir> <world> <acks> <steps> <safe|never> [lazy]');
}
const lazy = lazyArg === 'lazy';
const acksFd = openSync(acks, 'a');
const say = (line: string): void => {
  writeSync(1, `${line}\n`);
};

/** Reports each write once its promise resolved: the trace places the ack after its syscalls. */
function ackingStore(inner: FileStore): RunStore {
  let records = 0;
  const write = async (method: string, recs: readonly LogRecord[], doWrite: () => Promise<void>): Promise<void> => {
    records += recs.length;
    const last = records - 1;
    const barrier = method === 'resultAndIntent' || recs.some(isBarrier);
    await doWrite();
    writeSync(acksFd, `ACK ${last} ${method} ${barrier ? 'barrier' : 'plain'}\n`);
  };
  return {
    runStarted: (id, rec) => write('runStarted', [rec], () => inner.runStarted(id, rec)),
    intent: (id, rec) => write('intent', [rec], () => inner.intent(id, rec)),
    resultAndIntent: (id, result, intent) =>
      write('resultAndIntent', [result, intent], () => inner.resultAndIntent(id, result, intent)),
    result: (id, resultId, rec) => write('result', [rec], () => inner.result(id, resultId, rec)),
    step: (id, rec) => write('step', [rec], () => inner.step(id, rec)),
    runEnded: (id, rec) => write('runEnded', [rec], () => inner.runEnded(id, rec)),
    inputRequest: (id, rec) => write('inputRequest', [rec], () => inner.inputRequest(id, rec)),
    input: (id, rec) => write('input', [rec], () => inner.input(id, rec)),
    readLog: (id) => inner.readLog(id),
    acquire: (id, opts) => inner.acquire(id, opts),
  };
}

/** The negative control: the same appends, none of them a barrier, so nothing is fsynced. */
class LazyFileStore extends FileStore {
  protected override append(write: LogAppend): Promise<void> {
    return super.append({ ...write, barrier: false });
  }
}

const onWarning = (w: { code: string; message: string }): void => {
  process.stderr.write(`WARN ${w.code} ${w.message}\n`);
};
const options = { dir, onWarning };
const store = lazy ? new LazyFileStore(options) : new FileStore(options);
const { agent, request } = powerAgent({
  store: ackingStore(store),
  world,
  steps: Number(stepsArg),
  modelPolicy: policy,
  onCall: (seq, hash) => say(`CALL ${seq} ${hash}`),
});
say(`RESULT ${JSON.stringify(await run(agent, request))}`);
