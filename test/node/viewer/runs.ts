/**
 * Runs for the viewer tests, made by real runs of the library (FileStore, the scripted model of
 * ./agent.ts): finished, awaiting approval, interrupted (a real log cut where a crash could cut
 * it), resumed after a crash and settled by a person — and the hostile ones: a torn tail, a
 * corrupt middle line, a 5 MB observation, 50,000 steps.
 */
import { appendFile, readFile, rm, writeFile } from 'node:fs/promises';
import { decodeLog, encodeRecord, resume, run } from '../../../src/core/index.ts';
import type { LogRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import agentFor from './agent.ts';

/** Drive `runId` in `dir` to its end (or its first question). */
export async function runIn(dir: string, runId: string): Promise<Awaited<ReturnType<typeof run>>> {
  const { agent, request } = agentFor({ runId, dir });
  return run(agent, request);
}

/** Keep the first `n` records of a run's log: what a crash after the n-th write leaves. */
async function cutAfter(dir: string, runId: string, keep: (lines: string[]) => number): Promise<void> {
  const file = new FileStore({ dir }).logPath(runId);
  const lines = (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '');
  await writeFile(
    file,
    lines
      .slice(0, keep(lines))
      .map((l) => `${l}\n`)
      .join(''),
  );
}

const isActionIntent = (l: string): boolean => l.includes('"kind":"intent"') && l.includes('"intent":"action"');

/** The everyday runs: finished, awaiting approval, interrupted, resumed and settled. */
export async function everydayRuns(dir: string): Promise<void> {
  await runIn(dir, 'finished-1');
  await runIn(dir, 'approve-1');
  // A crash while the second lookup ran: the log ends with its action intent.
  await runIn(dir, 'finished-cut');
  await cutAfter(
    dir,
    'finished-cut',
    (lines) => lines.findIndex((l, i) => isActionIntent(l) && lines.slice(0, i).some(isActionIntent)) + 1,
  );
  // A `never` action in flight at a crash, settled by a person (it did happen).
  await runIn(dir, 'never-settled');
  await cutAfter(dir, 'never-settled', (lines) => lines.findIndex(isActionIntent) + 1);
  const { agent, request } = agentFor({ runId: 'never-settled', dir });
  const waiting = await resume(agent, request);
  await resume(agent, request, {
    input: { kind: 'executed', resultId: waiting.pending?.resultId ?? '', observation: 'it was fired' },
  });
}

/** The hostile logs: a torn tail, a corrupt middle line, a 5 MB observation, 50,000 steps. */
export async function hostileRuns(dir: string): Promise<void> {
  const store = new FileStore({ dir });
  await runIn(dir, 'finished-torn');
  await appendFile(store.logPath('finished-torn'), '{"kind":"intent","v":"1.1","inte');
  await runIn(dir, 'finished-corrupt');
  const file = store.logPath('finished-corrupt');
  const lines = (await readFile(file, 'utf8')).split('\n');
  lines[5] = 'this line is not JSON <script>alert(1)</script>';
  await writeFile(file, lines.join('\n'));
  await runIn(dir, 'big-1');
  await longRun(dir);
}

/**
 * 50,000 steps: the records of a real run's first step and last step (`finished-1`), repeated
 * with their step numbers and ids renumbered. A real run that long keeps its whole conversation
 * in every prompt (quadratic), which is not what this log is for: it tests reading and showing.
 */
export async function longRun(dir: string, steps = 50_000): Promise<void> {
  const store = new FileStore({ dir });
  await runIn(dir, 'finished-template');
  const records = decodeLog(await readFile(store.logPath('finished-template'), 'utf8')).records;
  const stepOf = (r: LogRecord): number => (r.kind === 'step' ? r.step.stepIndex : 'stepIndex' in r ? r.stepIndex : -1);
  const first = records.filter((r) => stepOf(r) === 0);
  const last = records.filter((r) => stepOf(r) === 2);
  const renumber = (r: LogRecord, i: number): string =>
    encodeRecord(
      JSON.parse(
        JSON.stringify(r)
          .replaceAll('"s0.', `"s${i}.`)
          .replaceAll('"s2.', `"s${i}.`)
          .replace(/"(stepIndex|callSeq)":\d+/g, `"$1":${i}`),
      ) as LogRecord,
    );
  const lines = [encodeRecord({ ...(records[0] as LogRecord & { kind: 'run_started' }), runId: 'long-1' })];
  for (let i = 0; i < steps - 1; i++) for (const r of first) lines.push(renumber(r, i));
  for (const r of last) lines.push(renumber(r, steps - 1));
  const ended = records.at(-1) as LogRecord & { kind: 'run_ended' };
  lines.push(
    encodeRecord({
      ...ended,
      steps,
      validActions: steps - 1,
      usage: { inputTokens: 100 * steps, outputTokens: 20 * steps },
    }),
  );
  await writeFile(store.logPath('long-1'), lines.map((l) => `${l}\n`).join(''));
  await rm(store.logPath('finished-template'));
}
