/**
 * Records the file-system operations of a traced process from `strace -f -y -xx` output: every
 * directory-entry change, data write, truncate and fsync under one root directory, plus the
 * bytes the process wrote to two side files outside the model — the "world" (side effects) and
 * the acks (when each store write resolved). Pure parsing; `traceRun` spawns strace.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** One recorded operation, in the order the calls returned. Paths are relative to the root ('' is the root). */
export type TraceEvent =
  | { readonly kind: 'mkdir'; readonly path: string }
  | { readonly kind: 'create'; readonly path: string; readonly ino: number }
  | { readonly kind: 'unlink'; readonly path: string }
  | { readonly kind: 'rename'; readonly from: string; readonly to: string }
  | { readonly kind: 'write'; readonly ino: number; readonly offset: number; readonly bytes: Buffer }
  | { readonly kind: 'truncate'; readonly ino: number; readonly size: number }
  | { readonly kind: 'fsync'; readonly ino: number }
  | { readonly kind: 'fsyncDir'; readonly path: string }
  | { readonly kind: 'ack'; readonly text: string }
  | { readonly kind: 'world'; readonly bytes: Buffer };

/** The system calls `traceRun` asks strace for (the parser understands each of them). */
export const TRACED_CALLS = [
  'open',
  'openat',
  'creat',
  'close',
  'write',
  'pwrite64',
  'writev',
  'pwritev',
  'pwritev2',
  'fsync',
  'fdatasync',
  'truncate',
  'ftruncate',
  'mkdir',
  'mkdirat',
  'unlink',
  'unlinkat',
  'rmdir',
  'rename',
  'renameat',
  'renameat2',
] as const;

/** Where the traced process keeps the model's files and the two side files (absolute paths). */
export type TraceLayout = { readonly root: string; readonly world: string; readonly acks: string };

type Fd =
  | { readonly kind: 'file'; readonly ino: number; readonly append: boolean; pos: number }
  | { readonly kind: 'dir'; readonly path: string }
  | { readonly kind: 'world' | 'acks' };

const HEX = '((?:\\\\x[0-9a-f]{2})*)';
const FD = '(\\d+)(?:<[^>]*>)?';
const DIRFD = '(?:AT_FDCWD|\\d+)(?:<([^>]*)>)?';

/** Decode a string strace printed with `-xx` (every byte as `\xNN`). */
export function unhex(s: string): Buffer {
  return Buffer.from(s.replaceAll('\\x', ''), 'hex');
}

/** Join `<unfinished ...>` / `<... resumed>` halves, so each call is one line, placed where it returned. */
function completeCalls(trace: string): string[] {
  const pending = new Map<string, string>();
  const calls: string[] = [];
  for (const raw of trace.split('\n')) {
    const m = /^(\d+) +(.*)$/.exec(raw);
    if (!m) continue;
    const [, pid, rest] = m as unknown as [string, string, string];
    if (rest.endsWith(' <unfinished ...>')) {
      pending.set(pid, rest.slice(0, -' <unfinished ...>'.length));
      continue;
    }
    const resumed = /^<\.\.\. \w+ resumed>(.*)$/.exec(rest);
    if (resumed) {
      calls.push((pending.get(pid) ?? '') + resumed[1]);
      pending.delete(pid);
    } else calls.push(rest);
  }
  return calls;
}

/** Parse a whole trace into the events under `layout.root` and on the two side files. */
export function parseTrace(trace: string, layout: TraceLayout): TraceEvent[] {
  const p = new TraceParser(layout);
  for (const call of completeCalls(trace)) p.call(call);
  return p.events;
}

class TraceParser {
  readonly events: TraceEvent[] = [];
  readonly #layout: TraceLayout;
  readonly #fds = new Map<number, Fd>();
  /** The live namespace: relative path to 'dir' or an inode number. */
  readonly #names = new Map<string, 'dir' | number>([['', 'dir']]);
  readonly #sizes = new Map<number, number>();
  #nextIno = 1;

  constructor(layout: TraceLayout) {
    this.#layout = layout;
  }

  call(line: string): void {
    const m = /^(\w+)\((.*)\) += (-?\d+)(?:<([^>]*)>)?/.exec(line);
    if (!m || Number(m[3]) < 0) return; // failed calls change nothing
    const [, name, args, ret, retPath] = m as unknown as [string, string, string, string, string | undefined];
    const r = Number(ret);
    if (name === 'open' || name === 'openat' || name === 'creat') this.#open(name, args, r, retPath);
    else if (name === 'close') this.#fds.delete(Number(/^(\d+)/.exec(args)?.[1]));
    else if (name.startsWith('write') || name.startsWith('pwrite')) this.#write(name, args, r);
    else if (name === 'fsync' || name === 'fdatasync') this.#fsync(args);
    else this.#entryOrTruncate(name, args);
  }

  /** A path under the root, relative to it; null when outside (or one of the side files). */
  #rel(abs: string): string | null {
    if (abs === this.#layout.world || abs === this.#layout.acks) return null;
    if (abs === this.#layout.root) return '';
    return abs.startsWith(`${this.#layout.root}/`) ? abs.slice(this.#layout.root.length + 1) : null;
  }

  /** An absolute path from a (possibly relative) path argument and its directory fd's annotation. */
  #abs(hexPath: string, dirAnnotation: string | undefined): string {
    const path = unhex(hexPath).toString('utf8');
    if (path.startsWith('/')) return path;
    if (dirAnnotation === undefined)
      throw new Error(`trace: relative path ${path} without its directory (run strace with -y)`);
    return `${unhex(dirAnnotation).toString('utf8')}/${path}`;
  }

  #open(name: string, args: string, fd: number, retPath: string | undefined): void {
    if (retPath === undefined) throw new Error('trace: open without the fd path annotation (run strace with -y)');
    const abs = unhex(retPath).toString('utf8');
    if (abs === this.#layout.world || abs === this.#layout.acks) {
      this.#fds.set(fd, { kind: abs === this.#layout.world ? 'world' : 'acks' });
      return;
    }
    const rel = this.#rel(abs);
    if (rel === null) return;
    const flags = name === 'creat' ? 'O_CREAT|O_TRUNC' : (/, ([A-Z_|]+)(?:, \d+)?$/.exec(args)?.[1] ?? '');
    let entry = this.#names.get(rel);
    if (entry === 'dir') {
      this.#fds.set(fd, { kind: 'dir', path: rel });
      return;
    }
    if (entry === undefined) {
      entry = this.#nextIno++;
      this.#names.set(rel, entry);
      this.#sizes.set(entry, 0);
      this.events.push({ kind: 'create', path: rel, ino: entry });
    } else if (flags.includes('O_TRUNC')) {
      this.#sizes.set(entry, 0);
      this.events.push({ kind: 'truncate', ino: entry, size: 0 });
    }
    this.#fds.set(fd, { kind: 'file', ino: entry, append: flags.includes('O_APPEND'), pos: 0 });
  }

  #write(name: string, args: string, written: number): void {
    const fd = this.#fds.get(Number(/^(\d+)/.exec(args)?.[1]));
    if (fd === undefined || fd.kind === 'dir') return;
    const strings = [...args.matchAll(new RegExp(`"${HEX}"`, 'g'))].map((s) => unhex(s[1] as string));
    const bytes = Buffer.concat(strings).subarray(0, written);
    if (fd.kind === 'world') this.events.push({ kind: 'world', bytes });
    if (fd.kind === 'acks')
      for (const text of bytes
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== ''))
        this.events.push({ kind: 'ack', text });
    if (fd.kind !== 'file') return;
    const explicit = name.startsWith('pwrite') ? Number(/, (\d+)(?:, \w+)?$/.exec(args)?.[1]) : null;
    const size = this.#sizes.get(fd.ino) ?? 0;
    const offset = explicit ?? (fd.append ? size : fd.pos);
    if (explicit === null) fd.pos = offset + written;
    this.#sizes.set(fd.ino, Math.max(size, offset + written));
    this.events.push({ kind: 'write', ino: fd.ino, offset, bytes });
  }

  #fsync(args: string): void {
    const fd = this.#fds.get(Number(/^(\d+)/.exec(args)?.[1]));
    if (fd?.kind === 'file') this.events.push({ kind: 'fsync', ino: fd.ino });
    if (fd?.kind === 'dir') this.events.push({ kind: 'fsyncDir', path: fd.path });
  }

  #entryOrTruncate(name: string, args: string): void {
    if (name === 'ftruncate') {
      const m = new RegExp(`^${FD}, (\\d+)`).exec(args);
      const fd = this.#fds.get(Number(m?.[1]));
      if (fd?.kind === 'file') this.#truncate(fd.ino, Number(m?.[2]));
      return;
    }
    const paths = [...args.matchAll(new RegExp(`(?:${DIRFD}, )?"${HEX}"`, 'g'))].map((s) =>
      this.#rel(this.#abs(s[2] as string, s[1])),
    );
    const [a, b] = paths;
    if (a === null || a === undefined) return;
    if (name === 'truncate') {
      const ino = this.#names.get(a);
      if (typeof ino === 'number') this.#truncate(ino, Number(/, (\d+)$/.exec(args)?.[1]));
    } else if (name === 'mkdir' || name === 'mkdirat') {
      this.#names.set(a, 'dir');
      this.events.push({ kind: 'mkdir', path: a });
    } else if (name === 'unlink' || name === 'unlinkat' || name === 'rmdir') {
      this.#names.delete(a);
      this.events.push({ kind: 'unlink', path: a });
    } else if (name.startsWith('rename') && b !== null && b !== undefined) {
      if (dirname(a) !== dirname(b)) throw new Error(`trace: rename across directories (${a} → ${b}) is not modelled`);
      const moved = this.#names.get(a);
      if (moved !== undefined) this.#names.set(b, moved);
      this.#names.delete(a);
      this.events.push({ kind: 'rename', from: a, to: b });
    }
  }

  #truncate(ino: number, size: number): void {
    this.#sizes.set(ino, size);
    this.events.push({ kind: 'truncate', ino, size });
  }
}

/** Run `argv` under `strace -f`; resolves with the trace text and the process's stdout. */
export function traceRun(
  argv: readonly string[],
  traceFile: string,
): Promise<{ readonly trace: string; readonly stdout: string }> {
  const args = [
    '-f',
    '-qq',
    '-y',
    '-xx',
    '-s',
    String(1 << 20),
    '-e',
    `trace=${TRACED_CALLS.join(',')}`,
    '-o',
    traceFile,
    ...argv,
  ];
  return new Promise((done, fail) => {
    const child = spawn('strace', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => {
      if (code !== 0) fail(new Error(`traced run failed (${code}): ${stderr.slice(0, 2000)}`));
      else readFile(traceFile, 'utf8').then((trace) => done({ trace, stdout }), fail);
    });
  });
}
