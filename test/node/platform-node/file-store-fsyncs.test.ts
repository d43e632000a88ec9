/**
 * What a durable step costs FileStore, counted in system calls under strace (decision 0040): an
 * action step is two barriers with `modelReplayPolicy: 'safe'` (the action intent, carrying the
 * model result; the step), three with `'never'` (the model-call intent too); a final-answer step is
 * one. Every store call is one write of the log (`run_started` is step 0's fourth); the records
 * that are not barriers (`run_started`, a safe model-call intent, a result written alone) are not
 * fsynced — the next barrier's fsync covers them. The first barrier also fsyncs the directory and
 * the parents of every directory the store created, so the log's name survives a power cut too.
 */
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../../src/platform-node/index.ts';
import { machineHas } from '../../support/machine.ts';
import { tempDir } from '../../support/temp-dir.ts';

const straceWorks = machineHas(
  spawnSync('strace', ['-f', '-e', 'trace=none', '-o', '/dev/null', 'true'], { stdio: 'ignore' }).status === 0,
  `FileStore's writes and fsyncs are counted under strace: the counts need strace able to trace a child (install strace; in a container, allow ptrace)`,
);

type StepCost = { readonly decision: string; readonly writes: number; readonly fsyncs: number };

/**
 * Cut an `strace -f -y` trace into steps at the child's `STEP <k> <decision>` lines (each printed
 * once its step is durable) and count, per step, the writes and fsyncs of the run's log file.
 */
export function costPerStep(trace: string): StepCost[] {
  const steps: StepCost[] = [];
  let writes = 0;
  let fsyncs = 0;
  for (const line of trace.split('\n')) {
    const step = /write\(1<[^>]*>, "STEP \d+ (\w+)\\n"/.exec(line);
    if (step) {
      steps.push({ decision: step[1] as string, writes, fsyncs });
      writes = fsyncs = 0;
      continue;
    }
    // Only calls on the log (fd annotated with its path by -y); the directory's fsync is another fd.
    if (!/^\d+ +\w+\(\d+<[^>]*\.jsonl>/.test(line) || / = -1 /.test(line)) continue;
    if (/^\d+ +(?:write|writev|pwrite64|pwritev2?)\(/.test(line)) writes++;
    if (/^\d+ +(?:fsync|fdatasync)\(/.test(line)) fsyncs++;
  }
  return steps;
}

async function traceSteps(policy: 'safe' | 'never', steps: number): Promise<StepCost[]> {
  const dir = await tempDir();
  const traceFile = join(dir, 'trace.txt');
  const fixture = resolve(import.meta.dirname, 'fixtures/fsync-steps.ts');
  const args = [
    '-f',
    '-qq',
    '-y',
    '-e',
    'trace=write,writev,pwrite64,pwritev,pwritev2,fsync,fdatasync',
    '-s',
    '64',
    '-o',
    traceFile,
  ];
  const r = spawnSync(
    'strace',
    [...args, process.execPath, '--import', 'tsx', fixture, join(dir, 'logs'), policy, String(steps)],
    { encoding: 'utf8' },
  );
  expect(r.stdout.trim().split('\n').at(-1), r.stderr).toBe('END final_answer');
  return costPerStep(await readFile(traceFile, 'utf8'));
}

describe.runIf(straceWorks)('FileStore: writes and fsyncs of the log per step, under strace', () => {
  it('makes an action step two fsyncs with modelReplayPolicy safe (model intent, result with action intent, step: three writes), and a final-answer step one', async () => {
    const steps = await traceSteps('safe', 4);
    expect(steps).toEqual([
      { decision: 'action', writes: 4, fsyncs: 2 },
      { decision: 'action', writes: 3, fsyncs: 2 },
      { decision: 'action', writes: 3, fsyncs: 2 },
      { decision: 'final', writes: 3, fsyncs: 1 },
    ]);
  }, 30_000);

  it('makes an action step three fsyncs with modelReplayPolicy never: the model-call intent is a barrier then', async () => {
    const steps = await traceSteps('never', 3);
    expect(steps).toEqual([
      { decision: 'action', writes: 4, fsyncs: 3 },
      { decision: 'action', writes: 3, fsyncs: 3 },
      { decision: 'final', writes: 3, fsyncs: 2 },
    ]);
  }, 30_000);
});

/** The paths fsynced (in order) before the traced child printed `marker`, from `strace -f` output. */
function fsyncedBefore(trace: string, marker: string): string[] {
  const fdPath = new Map<string, string>();
  const synced: string[] = [];
  for (const line of trace.split('\n')) {
    const open = /openat\(AT_FDCWD, "([^"]+)",[^)]*\) = (\d+)/.exec(line);
    if (open) fdPath.set(open[2] as string, open[1] as string);
    const sync = /\b(?:fsync|fdatasync)\((\d+)/.exec(line);
    if (sync) synced.push(fdPath.get(sync[1] as string) ?? `fd ${sync[1] as string}`);
    if (line.includes(`write(1, "${marker}`)) return synced;
  }
  throw new Error(`the trace has no write of ${marker}`);
}

/** Run the first-barrier fixture under strace; the paths it fsynced before the barrier resolved. */
async function traceFirstBarrier(dir: string, traceFile: string, args: readonly string[]): Promise<string[]> {
  const fixture = resolve(import.meta.dirname, 'fixtures/first-barrier.ts');
  const r = spawnSync(
    'strace',
    [
      '-f',
      '-qq',
      '-e',
      'trace=openat,fsync,fdatasync,write',
      '-s',
      '64',
      '-o',
      traceFile,
      process.execPath,
      '--import',
      'tsx',
      fixture,
      dir,
      ...args,
    ],
    { encoding: 'utf8' },
  );
  expect(r.stdout).toBe('barrier-resolved\n');
  return fsyncedBefore(await readFile(traceFile, 'utf8'), 'barrier-resolved');
}

describe('FileStore: what is fsynced before the first barrier resolves', () => {
  it.runIf(straceWorks)(
    'fsyncs the directory at the first barrier of an instance that found the log already created by another one',
    async () => {
      const root = await tempDir();
      const dir = join(root, 'logs');
      const synced = await traceFirstBarrier(dir, join(root, 'trace.txt'), ['handover']);
      expect(synced).toContain(new FileStore({ dir }).logPath('r'));
      expect(synced).toContain(dir);
    },
  );

  it.runIf(straceWorks)('fsyncs the log, its directory and the parents of every directory it created', async () => {
    const root = await tempDir();
    const dir = join(root, 'new', 'logs');
    const traceFile = join(root, 'trace.txt');
    const synced = await traceFirstBarrier(dir, traceFile, []);
    const log = new FileStore({ dir }).logPath('r');
    expect(synced).toContain(log);
    expect(synced).toContain(dir);
    expect(synced).toContain(dirname(dir));
    expect(synced).toContain(root);
  });
});
