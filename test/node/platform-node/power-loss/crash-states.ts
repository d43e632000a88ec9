/**
 * The power-cut model of docs/decisions/0016-power-loss-model.md: from recorded file-system
 * events, every on-disk state a power cut after event `cut` could leave. Pure functions.
 *
 * - A directory entry change (create, mkdir, unlink, rename) is durable once its directory was
 *   fsynced after it; later ones on the same name survive as any prefix, each name on its own
 *   (a rename pending in a directory makes that directory's pending changes one prefix).
 * - A file's data is durable up to its last fsync; later writes and truncates survive as any
 *   prefix, and the last surviving write may be torn (cut short at a few byte counts, or with its
 *   length durable but its bytes zeros, as with delayed allocation).
 * - Files and directories are independent of each other: every combination is a state.
 * - The world (side effects) and the acks are what happened before the cut: nothing rolls them back.
 */
import { dirname } from 'node:path';
import type { TraceEvent } from './trace.ts';

/** One state a power cut can leave. */
export type CrashState = {
  /** Events before the cut. */
  readonly cut: number;
  /** Directories (relative paths, '' the root) and files with their bytes. */
  readonly dirs: readonly string[];
  readonly files: ReadonlyMap<string, Buffer>;
  /** What the world saw before the cut, and the acks written before it. */
  readonly world: Buffer;
  readonly acks: readonly string[];
};

type EntryEvent = Extract<TraceEvent, { kind: 'mkdir' | 'create' | 'unlink' | 'rename' }>;
type DataEvent = Extract<TraceEvent, { kind: 'write' | 'truncate' }>;
type Indexed<T> = { readonly i: number; readonly e: T };

const parentOf = (path: string): string => (dirname(path) === '.' ? '' : dirname(path));
const entryDir = (e: EntryEvent): string => parentOf(e.kind === 'rename' ? e.from : e.path);
const entryName = (e: EntryEvent): string => (e.kind === 'rename' ? e.from : e.path);

/** Cartesian product of choice lists. */
function product<T>(lists: readonly (readonly T[])[]): T[][] {
  return lists.reduce<T[][]>((acc, list) => acc.flatMap((xs) => list.map((x) => [...xs, x])), [[]]);
}

/** Every prefix of `xs`, shortest first. */
function prefixes<T>(xs: readonly T[]): T[][] {
  return Array.from({ length: xs.length + 1 }, (_, n) => xs.slice(0, n));
}

/** The choices of surviving entry events: for each directory, the durable ones plus pending prefixes. */
function namespaceChoices(events: readonly TraceEvent[], cut: number): Set<number>[] {
  const byDir = new Map<string, Indexed<EntryEvent>[]>();
  const lastSync = new Map<string, number>();
  events.slice(0, cut).forEach((e, i) => {
    if (e.kind === 'fsyncDir') lastSync.set(e.path, i);
    if (e.kind === 'mkdir' || e.kind === 'create' || e.kind === 'unlink' || e.kind === 'rename') {
      const list = byDir.get(entryDir(e)) ?? [];
      list.push({ i, e });
      byDir.set(entryDir(e), list);
    }
  });
  const durable: number[] = [];
  const groups: Indexed<EntryEvent>[][] = [];
  for (const [dir, list] of byDir) {
    const synced = lastSync.get(dir) ?? -1;
    durable.push(...list.filter((x) => x.i < synced).map((x) => x.i));
    const pending = list.filter((x) => x.i > synced);
    if (pending.some((x) => x.e.kind === 'rename')) groups.push(pending);
    else
      for (const name of new Set(pending.map((x) => entryName(x.e))))
        groups.push(pending.filter((x) => entryName(x.e) === name));
  }
  return product(groups.map((g) => prefixes(g))).map(
    (picked) => new Set([...durable, ...picked.flat().map((x) => x.i)]),
  );
}

/** Replay the chosen entry events: the surviving directories and the inode behind each file name. */
function namespace(
  events: readonly TraceEvent[],
  chosen: ReadonlySet<number>,
): { dirs: Set<string>; files: Map<string, number> } {
  const dirs = new Set<string>(['']);
  const files = new Map<string, number>();
  events.forEach((e, i) => {
    if (!chosen.has(i)) return;
    // An entry in a directory that did not survive did not survive either.
    if (e.kind === 'mkdir' && dirs.has(parentOf(e.path))) dirs.add(e.path);
    if (e.kind === 'create' && dirs.has(parentOf(e.path))) files.set(e.path, e.ino);
    if (e.kind === 'unlink') {
      files.delete(e.path);
      dirs.delete(e.path);
    }
    if (e.kind === 'rename') {
      const ino = files.get(e.from);
      files.delete(e.from);
      if (ino !== undefined) files.set(e.to, ino);
    }
  });
  return { dirs, files };
}

function apply(content: Buffer, e: DataEvent): Buffer {
  if (e.kind === 'truncate')
    return e.size <= content.length
      ? content.subarray(0, e.size)
      : Buffer.concat([content, Buffer.alloc(e.size - content.length)]);
  const end = e.offset + e.bytes.length;
  const out = Buffer.alloc(Math.max(content.length, end));
  content.copy(out);
  e.bytes.copy(out, e.offset);
  return out;
}

/** The ways a write can be torn: a few prefixes (1 byte, half, all but one, each 4 KiB page end) and all zeros. */
export function tornVariants(e: Extract<TraceEvent, { kind: 'write' }>): Buffer[] {
  const n = e.bytes.length;
  const cuts = new Set([1, Math.floor(n / 2), n - 1]);
  for (let k = 4096 - (e.offset % 4096); k < n; k += 4096) cuts.add(k);
  const out = [...cuts]
    .filter((k) => k > 0 && k < n)
    .sort((a, b) => a - b)
    .map((k) => e.bytes.subarray(0, k));
  return [...out, Buffer.alloc(n)];
}

/** Every content an inode can have after the cut. */
export function contentChoices(events: readonly TraceEvent[], cut: number, ino: number): Buffer[] {
  let synced = -1;
  const ops: Indexed<DataEvent>[] = [];
  events.slice(0, cut).forEach((e, i) => {
    if (e.kind === 'fsync' && e.ino === ino) synced = i;
    if ((e.kind === 'write' || e.kind === 'truncate') && e.ino === ino) ops.push({ i, e });
  });
  const base = ops.filter((x) => x.i < synced).reduce<Buffer>((c, x) => apply(c, x.e), Buffer.alloc(0));
  const pending = ops.filter((x) => x.i > synced).map((x) => x.e);
  const out: Buffer[] = [];
  let content = base;
  out.push(content);
  for (const e of pending) {
    if (e.kind === 'write') for (const bytes of tornVariants(e)) out.push(apply(content, { ...e, bytes }));
    content = apply(content, e);
    out.push(content);
  }
  return out;
}

/** Every state a power cut after the first `cut` events can leave (duplicates included). */
export function* crashStates(events: readonly TraceEvent[], cut: number): Generator<CrashState> {
  const before = events.slice(0, cut);
  const world = Buffer.concat(before.flatMap((e) => (e.kind === 'world' ? [e.bytes] : [])));
  const acks = before.flatMap((e) => (e.kind === 'ack' ? [e.text] : []));
  for (const chosen of namespaceChoices(events, cut)) {
    const { dirs, files } = namespace(events, chosen);
    const names = [...files.keys()].filter((f) => dirs.has(parentOf(f))).sort();
    const choices = names.map((f) => contentChoices(events, cut, files.get(f) as number));
    for (const contents of product(choices)) {
      yield {
        cut,
        dirs: [...dirs].sort(),
        files: new Map(names.map((f, k) => [f, contents[k] as Buffer])),
        world,
        acks,
      };
    }
  }
}
