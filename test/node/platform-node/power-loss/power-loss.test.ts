/**
 * Power loss, not only process death (a write acknowledged is not yet on disk): the crash-state
 * explorer's model, its trace parser, a negative control, and the exploration of real FileStore
 * runs. The figures in docs/reliability.md come from the longer `npm run fuzz:power`.
 */
import { describe, expect, it } from 'vitest';
import { machineHas } from '../../../support/machine.ts';
import { contentChoices, crashStates, tornVariants } from './crash-states.ts';
import { ackedBarrierRecords, explore, straceWorks, tally } from './explore.ts';
import type { ExploreReport } from './explore.ts';
import { parseTrace } from './trace.ts';
import type { TraceEvent } from './trace.ts';

const hx = (s: string): string =>
  [...Buffer.from(s, 'utf8')].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('');
const layout = { root: '/r/fs', world: '/r/world.txt', acks: '/r/acks.txt' };
const w = (ino: number, offset: number, text: string): TraceEvent => ({
  kind: 'write',
  ino,
  offset,
  bytes: Buffer.from(text),
});
const texts = (bufs: readonly Buffer[]): string[] => bufs.map((b) => b.toString('latin1'));

describe('power-loss model: what a cut leaves of a file', () => {
  const events: TraceEvent[] = [
    { kind: 'create', path: 'log', ino: 1 },
    w(1, 0, 'aa\n'),
    { kind: 'fsync', ino: 1 },
    w(1, 3, 'bbbb\n'),
    w(1, 8, 'cc\n'),
  ];

  it.each([
    { cut: 2, want: ['', 'a', 'aa', '\0\0\0', 'aa\n'] },
    { cut: 3, want: ['aa\n'] },
    {
      cut: 5,
      want: [
        'aa\n',
        'aa\nb',
        'aa\nbb',
        'aa\nbbbb',
        'aa\n\0\0\0\0\0',
        'aa\nbbbb\n',
        'aa\nbbbb\nc',
        'aa\nbbbb\ncc',
        'aa\nbbbb\n\0\0\0',
        'aa\nbbbb\ncc\n',
      ],
    },
  ])(
    'after $cut events, keeps what was fsynced and any prefix of the later writes, the last one torn',
    ({ cut, want }) => {
      expect(texts(contentChoices(events, cut, 1))).toEqual(want);
    },
  );

  it('tears a write at 1 byte, half, all but one, every 4 KiB page end, and as zeros', () => {
    const variants = tornVariants({ kind: 'write', ino: 1, offset: 4000, bytes: Buffer.alloc(200, 0x61) });
    expect(variants.map((b) => b.length)).toEqual([1, 96, 100, 199, 200]);
    expect(variants.at(-1)?.every((b) => b === 0)).toBe(true);
  });
});

describe('power-loss model: what a cut leaves of a directory', () => {
  const names = (events: readonly TraceEvent[], cut: number): string[] =>
    [...new Set([...crashStates(events, cut)].map((s) => [...s.dirs, ...s.files.keys()].join(',')))].sort();

  it('may lose a file whose directory was not fsynced since it was created, even with its data fsynced', () => {
    const events: TraceEvent[] = [
      { kind: 'mkdir', path: 'd' },
      { kind: 'fsyncDir', path: '' },
      { kind: 'create', path: 'd/f', ino: 1 },
      w(1, 0, 'x'),
      { kind: 'fsync', ino: 1 },
    ];
    expect(names(events, 5)).toEqual([',d', ',d,d/f']);
    expect(names([...events, { kind: 'fsyncDir', path: 'd' }], 6)).toEqual([',d,d/f']);
  });

  it('keeps nothing below a directory whose own entry did not survive', () => {
    const events: TraceEvent[] = [
      { kind: 'mkdir', path: 'd' },
      { kind: 'create', path: 'd/f', ino: 1 },
      { kind: 'fsyncDir', path: 'd' },
    ];
    expect(names(events, 3)).toEqual(['', ',d,d/f']);
  });

  it('lets an unsynced unlink or rename have happened or not, each name on its own', () => {
    const events: TraceEvent[] = [
      { kind: 'create', path: 'a', ino: 1 },
      { kind: 'create', path: 'b', ino: 2 },
      { kind: 'fsyncDir', path: '' },
      { kind: 'unlink', path: 'a' },
      { kind: 'create', path: 'c', ino: 3 },
    ];
    expect(names(events, 5)).toEqual([',a,b', ',a,b,c', ',b', ',b,c']);
    const renamed: TraceEvent[] = [
      { kind: 'create', path: 'a', ino: 1 },
      { kind: 'fsyncDir', path: '' },
      { kind: 'rename', from: 'a', to: 'z' },
    ];
    expect(names(renamed, 3)).toEqual([',a', ',z']);
  });

  it('never rolls back what the world saw or the acks written before the cut', () => {
    const events: TraceEvent[] = [
      { kind: 'world', bytes: Buffer.from('effect\n') },
      { kind: 'ack', text: 'ACK 0 intent' },
      { kind: 'create', path: 'f', ino: 1 },
    ];
    for (const s of crashStates(events, 3)) {
      expect(s.world.toString()).toBe('effect\n');
      expect(s.acks).toEqual(['ACK 0 intent']);
    }
  });
});

describe('power-loss trace parser (strace -f -y -xx)', () => {
  it('joins interrupted calls, resolves append offsets, and separates the world and the acks', () => {
    const log = hx('/r/fs/s/log');
    const trace = [
      `10 mkdir("${hx('/r/fs/s')}", 0777) = 0`,
      `10 mkdir("${hx('/r/fs/s')}", 0777) = -1 EEXIST (File exists)`,
      `11 openat(AT_FDCWD<${hx('/r')}>, "${log}", O_WRONLY|O_CREAT|O_APPEND|O_CLOEXEC, 0666) = 7<${log}>`,
      `11 write(7<${log}>, "${hx('ab')}", 2) = 2`,
      `12 write(7<${log}>, "${hx('cde')}", 3 <unfinished ...>`,
      `13 openat(AT_FDCWD<${hx('/r')}>, "${hx('/r/world.txt')}", O_WRONLY|O_CREAT|O_APPEND|O_CLOEXEC, 0666) = 8<${hx('/r/world.txt')}>`,
      `13 write(8<${hx('/r/world.txt')}>, "${hx('tool x\n')}", 7) = 7`,
      `12 <... write resumed>) = 2`,
      `12 fsync(7<${log}>) = 0`,
      `14 openat(AT_FDCWD<${hx('/r')}>, "${hx('/r/acks.txt')}", O_WRONLY|O_CREAT|O_APPEND, 0666) = 9<${hx('/r/acks.txt')}>`,
      `14 write(9<${hx('/r/acks.txt')}>, "${hx('ACK 0 intent\n')}", 13) = 13`,
      `11 openat(AT_FDCWD<${hx('/r')}>, "${hx('/r/fs/s')}", O_RDONLY|O_CLOEXEC) = 5<${hx('/r/fs/s')}>`,
      `11 fsync(5<${hx('/r/fs/s')}>) = 0`,
      `11 pwrite64(7<${log}>, "${hx('Z')}", 1, 1) = 1`,
      `11 unlinkat(AT_FDCWD<${hx('/r')}>, "${hx('fs/s/log')}", 0) = 0`,
    ].join('\n');
    const events = parseTrace(trace, layout).map((e) => ('bytes' in e ? { ...e, bytes: e.bytes.toString() } : e));
    expect(events).toEqual([
      { kind: 'mkdir', path: 's' },
      { kind: 'create', path: 's/log', ino: 1 },
      { kind: 'write', ino: 1, offset: 0, bytes: 'ab' },
      { kind: 'world', bytes: 'tool x\n' },
      { kind: 'write', ino: 1, offset: 2, bytes: 'cd' },
      { kind: 'fsync', ino: 1 },
      { kind: 'ack', text: 'ACK 0 intent' },
      { kind: 'fsyncDir', path: 's' },
      { kind: 'write', ino: 1, offset: 1, bytes: 'Z' },
      { kind: 'unlink', path: 's/log' },
    ]);
  });
});

describe('power-loss acks: what a cut must keep', () => {
  it.each([
    { acks: [], want: 0 },
    { acks: ['ACK 0 runStarted plain', 'ACK 1 intent plain'], want: 0 },
    { acks: ['ACK 0 runStarted plain', 'ACK 1 intent plain', 'ACK 3 resultAndIntent barrier'], want: 4 },
    {
      acks: ['ACK 3 resultAndIntent barrier', 'ACK 4 step barrier', 'ACK 5 intent plain', 'ACK 6 result plain'],
      want: 5,
    },
    { acks: ['ACK 0 runStarted plain', 'ACK 1 intent barrier'], want: 2 },
  ])(
    'promises the records through the last acknowledged barrier, not a later record that is none ($want)',
    ({ acks, want }) => {
      expect(ackedBarrierRecords(acks)).toBe(want);
    },
  );
});

function problemKinds(report: ExploreReport): Set<string> {
  return new Set(report.outcomes.flatMap((o) => o.problems.map((p) => p.split(':')[0] as string)));
}

const canTrace = machineHas(
  straceWorks(),
  'the power-loss states come from a run traced under strace: they need strace able to trace a child (install strace; in a container, allow ptrace)',
);

describe.runIf(canTrace)('power loss under FileStore: every state a cut can leave, resumed', () => {
  it('no state of a 4-step run loses an acknowledged barrier or fails to resume; each ends as the uninterrupted run, a never action in flight settled from the world, each never action exactly once', async () => {
    const report = await explore({ steps: 4, modelPolicy: 'safe', concurrency: 4 });
    const t = tally(report);
    expect(report.reference.result.stopReason).toBe('final_answer');
    expect(report.reference.world.length).toBeGreaterThan(0);
    expect(report.fsyncs).toBeGreaterThan(0);
    expect(report.distinct).toBeGreaterThan(report.cuts);
    // Every kind of state is reached: the cut lands before the first barrier, on a never action that did or did not happen, and elsewhere.
    expect(t['started afresh (no run_started survived)']).toBeGreaterThan(0);
    expect(t['settled: executed (the record happened)']).toBeGreaterThan(0);
    expect(t['settled: retry (it did not happen)']).toBeGreaterThan(0);
    expect(t['ended in_flight_unknown']).toBe(0);
    expect(t['resumed to the end']).toBe(report.distinct);
    expect(t['tail repaired by FileStore']).toBeGreaterThan(0);
    expect(report.outcomes.filter((o) => o.problems.length > 0)).toEqual([]);
  }, 120_000);

  it('under modelReplayPolicy never, no state sends a model call twice: one the world did not see is retried, one it saw is cancelled', async () => {
    const report = await explore({ steps: 3, modelPolicy: 'never', concurrency: 4 });
    expect(report.reference.world.filter((l) => l.startsWith('call '))).toHaveLength(3);
    expect(report.outcomes.some((o) => o.settled.includes('retry') && o.stopReason === 'final_answer')).toBe(true);
    expect(report.outcomes.some((o) => o.settled.includes('cancel') && o.stopReason === 'cancelled')).toBe(true);
    expect(report.outcomes.some((o) => o.stopReason === 'in_flight_unknown')).toBe(false);
    expect(report.outcomes.filter((o) => o.problems.length > 0)).toEqual([]);
  }, 120_000);

  it('catches a store that acknowledges barriers without fsync: lost barriers and never actions run twice', async () => {
    const report = await explore({ steps: 2, modelPolicy: 'safe', lazy: true, concurrency: 4 });
    const kinds = problemKinds(report);
    expect(kinds).toContain('lost an acknowledged barrier');
    expect(kinds).toContain('a never-replay effect happened twice');
  }, 120_000);
});
