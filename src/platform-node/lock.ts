/**
 * One-writer lock per run: a lock file created with `O_EXCL`, holding the owner's pid, host and
 * start time, with recovery of a stale lock left by a dead process on this host.
 * See docs/decisions/0008-file-store.md.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { lstat, readFile, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { NotRegularFileError, OPEN, openRegular, readRegular } from './regular-file.ts';
import { hostname } from 'node:os';
import { RunLockedError } from '../core/index.ts';

/** What a lock file holds. */
export type LockOwner = {
  readonly pid: number;
  readonly hostname: string;
  readonly acquiredAt: string;
  /** Unique per acquisition, so a release never removes someone else's lock. */
  readonly token: string;
  readonly runId: string;
  /** Linux: the kernel's boot id when the lock was taken; a lock from an earlier boot is stale. */
  readonly bootId?: string;
  /** Linux: the owner's start time (`/proc/<pid>/stat` field 22), so a reused pid is told apart. */
  readonly startTime?: string;
};

/** A lock this process took: how to release it, and the token that tells it from anyone else's. */
export type HeldLock = {
  /** Removes the lock file if it still holds this lock's token; idempotent. */
  readonly unlock: () => Promise<void>;
  readonly token: string;
};

/** A lock file that is empty or unreadable is only treated as stale once it is this old (ms). */
export const UNREADABLE_LOCK_GRACE_MS = 2_000;

type Inspection =
  | { readonly state: 'held'; readonly detail: string }
  | { readonly state: 'stale'; readonly raw: string }
  | { readonly state: 'gone' };

/**
 * Take the lock at `lockPath` for `runId`, recovering a stale one. Rejects with `RunLockedError`
 * when a live process (or one on another host, which cannot be checked) holds it.
 */
export async function acquireLock(lockPath: string, runId: string): Promise<HeldLock> {
  const owner: LockOwner = {
    ...(await selfIdentity()),
    hostname: hostname(),
    acquiredAt: new Date().toISOString(),
    token: randomUUID(),
    runId,
  };
  // A retry follows each stale-lock removal (ours or a concurrent recoverer's); a lock that
  // keeps coming back after that is someone else's live lock racing us.
  for (let round = 0; round < 3; round++) {
    if (await tryCreate(lockPath, owner)) {
      heldTokens().add(owner.token);
      return { unlock: releaser(lockPath, owner.token), token: owner.token };
    }
    const seen = await inspect(lockPath);
    if (seen.state === 'held') throw new RunLockedError(runId, seen.detail);
    if (seen.state === 'stale') await breakStale(lockPath, seen.raw, runId);
  }
  throw new RunLockedError(runId, `lock file ${lockPath} keeps reappearing`);
}

async function tryCreate(lockPath: string, owner: LockOwner): Promise<boolean> {
  let fh: FileHandle;
  try {
    // O_EXCL never follows a link; openRegular names a link, FIFO or directory found there.
    fh = await openRegular(lockPath, OPEN.createExclusive);
  } catch (e) {
    if (errCode(e) === 'EEXIST') return false;
    throw e;
  }
  try {
    await fh.writeFile(`${JSON.stringify(owner)}\n`);
  } finally {
    await fh.close();
  }
  return true;
}

async function inspect(lockPath: string): Promise<Inspection> {
  const bytes = await readRegular(lockPath);
  if (bytes === null) return { state: 'gone' };
  const raw = bytes.toString('utf8');
  const owner = parseOwner(raw);
  if (owner === null) {
    // Its writer may be between create and write, or died there: wait out a grace period.
    const age = await ageMs(lockPath);
    if (age === null) return { state: 'gone' };
    return age >= UNREADABLE_LOCK_GRACE_MS
      ? { state: 'stale', raw }
      : { state: 'held', detail: `lock file ${lockPath} is being written` };
  }
  const who = `pid ${owner.pid} on ${owner.hostname} since ${owner.acquiredAt}; lock file ${lockPath}`;
  if (owner.hostname !== hostname())
    return {
      state: 'held',
      detail: `${who}; another host, so its liveness cannot be checked — delete the lock file if that process is gone`,
    };
  if (await isOwnerAlive(owner)) return { state: 'held', detail: who };
  return { state: 'stale', raw };
}

/**
 * Remove a stale lock, at most once per stale owner: a second lock file (`.break`, `O_EXCL`)
 * serializes recoverers, and the lock is removed only if it still holds the stale content, so
 * a fresh lock taken meanwhile by another recoverer survives.
 */
async function breakStale(lockPath: string, staleRaw: string, runId: string): Promise<void> {
  const breakPath = `${lockPath}.break`;
  // The breaker carries the same identity as a lock, so a reused pid cannot keep it alive either.
  const breaker: LockOwner = {
    ...(await selfIdentity()),
    hostname: hostname(),
    acquiredAt: new Date().toISOString(),
    token: randomUUID(),
    runId,
  };
  if (!(await tryCreate(breakPath, breaker))) {
    const other = await inspect(breakPath);
    if (other.state === 'held')
      throw new RunLockedError(runId, `another process is recovering its stale lock (${other.detail})`);
    if (other.state === 'stale') await removeIfUnchanged(breakPath, other.raw);
    return;
  }
  try {
    await removeIfUnchanged(lockPath, staleRaw);
  } finally {
    await unlinkQuiet(breakPath);
  }
}

async function removeIfUnchanged(path: string, raw: string): Promise<void> {
  const now = await readRegular(path);
  if (now !== null && now.toString('utf8') === raw) await unlinkQuiet(path);
}

function releaser(lockPath: string, token: string): () => Promise<void> {
  let released: Promise<void> | null = null;
  return () => {
    released ??= (async () => {
      // Unreadable (gone, or replaced by something not a regular file): not ours to remove.
      const raw = await readRegular(lockPath).catch(() => null);
      if (raw !== null && parseOwner(raw.toString('utf8'))?.token === token) await unlinkQuiet(lockPath);
      heldTokens().delete(token);
    })();
    return released;
  };
}

/**
 * Whether the lock file still holds the lock of `token`: `held`; `lost` (with what is there
 * instead: nothing, another holder, something not a lock) when it was removed or taken over;
 * `unknown` when it could not be read this time (a transient error such as too many open files).
 */
export async function lockState(
  lockPath: string,
  token: string,
): Promise<{ readonly state: 'held' | 'unknown' } | { readonly state: 'lost'; readonly detail: string }> {
  let raw: Buffer | null;
  try {
    raw = await readRegular(lockPath);
  } catch (e) {
    if (e instanceof NotRegularFileError)
      return { state: 'lost', detail: `a ${e.found} replaced the lock file ${lockPath}` };
    return { state: 'unknown' };
  }
  if (raw === null) return { state: 'lost', detail: `its lock file ${lockPath} was removed` };
  const owner = parseOwner(raw.toString('utf8'));
  if (owner?.token === token) return { state: 'held' };
  const who = owner === null ? 'something that is not a complete lock' : `pid ${owner.pid} on ${owner.hostname}`;
  return { state: 'lost', detail: `its lock file ${lockPath} now holds ${who}` };
}

/** Parse a lock file's content; null when it is not a complete owner record. */
export function parseOwner(raw: string): LockOwner | null {
  try {
    const o = JSON.parse(raw) as Partial<LockOwner> | null;
    if (
      o &&
      Number.isInteger(o.pid) &&
      typeof o.hostname === 'string' &&
      typeof o.token === 'string' &&
      typeof o.acquiredAt === 'string' &&
      optionalString(o.bootId) &&
      optionalString(o.startTime)
    ) {
      return o as LockOwner;
    }
  } catch {
    // fall through: not (yet) a complete record
  }
  return null;
}

/**
 * Whether the process that wrote a lock on this host still runs. A pid alone can be reused: by
 * this very process after a restart (a container's pid 1), or after a reboot, or by an unrelated
 * process. So on Linux a lock from another boot is stale, and so is one whose pid (our own
 * included) now has another start time; a lock a worker thread of this process holds has our
 * pid and start time, so it stays live. Elsewhere a live pid counts as the owner.
 */
export async function isOwnerAlive(owner: LockOwner): Promise<boolean> {
  if (owner.pid === process.pid && heldTokens().has(owner.token)) return true;
  if (owner.bootId !== undefined) {
    const boot = await bootId();
    if (boot !== null && boot !== owner.bootId) return false;
  }
  // Our own pid with a token we do not hold: a worker thread of this process (same start time)
  // or an earlier process that had this pid (another start time).
  if (owner.pid !== process.pid && !isAlive(owner.pid)) return false;
  if (owner.startTime === undefined) return true;
  const now = await startTimeOf(owner.pid);
  return now === null || now === owner.startTime;
}

/** Tokens of the locks this process holds (shared by every copy of this module in the process). */
function heldTokens(): Set<string> {
  const key = Symbol.for('polyloop.node.heldLockTokens');
  const g = globalThis as { [key: symbol]: Set<string> | undefined };
  return (g[key] ??= new Set<string>());
}

async function selfIdentity(): Promise<{
  readonly pid: number;
  readonly bootId?: string;
  readonly startTime?: string;
}> {
  const [boot, start] = await Promise.all([bootId(), startTimeOf(process.pid)]);
  return {
    pid: process.pid,
    ...(boot === null ? {} : { bootId: boot }),
    ...(start === null ? {} : { startTime: start }),
  };
}

/** Linux: the boot id; null where `/proc` does not have it. */
async function bootId(): Promise<string | null> {
  const raw = await readFile('/proc/sys/kernel/random/boot_id', 'utf8').catch(() => null);
  return raw === null ? null : raw.trim();
}

/** Linux: a process's start time in clock ticks since boot; null where unknown. */
async function startTimeOf(pid: number): Promise<string | null> {
  if (process.platform !== 'linux') return null;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat === null) return null;
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so count after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

function optionalString(v: unknown): boolean {
  return v === undefined || typeof v === 'string';
}

/** Whether a process with this pid exists on this host (EPERM: it exists, owned by another user). */
export function isAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errCode(e) === 'EPERM';
  }
}

async function ageMs(path: string): Promise<number | null> {
  try {
    return Date.now() - (await lstat(path)).mtimeMs;
  } catch (e) {
    if (errCode(e) === 'ENOENT') return null;
    throw e;
  }
}

async function unlinkQuiet(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (e) {
    if (errCode(e) !== 'ENOENT') throw e;
  }
}

/** The `code` of a Node system error, or undefined. */
export function errCode(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const c = (e as { code?: unknown }).code;
  return typeof c === 'string' ? c : undefined;
}
