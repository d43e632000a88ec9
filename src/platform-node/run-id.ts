/**
 * Run id → file name. Run ids are opaque strings, so none of them may name a file outside the
 * store's directory, collide with another id, or trip a file system's rules (reserved names like
 * `CON`, case-insensitive names, length limits). See docs/decisions/0008-file-store.md.
 * @module
 */
import { createHash } from 'node:crypto';

/** Ids whose UTF-8 form is at most this many bytes are stored reversibly (hex: twice as many chars);
 * longer ids, and ids with a lone surrogate, are stored under a SHA-256 of the id. */
export const MAX_REVERSIBLE_ID_BYTES = 100;

const HEX_PREFIX = 'r-';
const HASH_PREFIX = 'h-';
/** Extension of a run log file. */
export const LOG_EXTENSION = '.jsonl';
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const FILE_NAME = /^(r-(?:[0-9a-f]{2})*|h-[0-9a-f]{64})\.jsonl$/;

/**
 * The file stem for a run id: `r-<hex of UTF-8>` when the id is short (reversible), else
 * `h-<sha256 hex of the id's UTF-16LE code units>`. Only `[0-9a-f-]` appear, so the name is safe on every file system,
 * including case-insensitive ones, and always starts with a letter and a dash (never `.`/`..`,
 * never a reserved device name). The two prefixes keep the two forms from colliding.
 */
export function runIdStem(runId: string): string {
  // UTF-8 cannot carry a lone surrogate (it would become U+FFFD and collide), so such ids take
  // the hashed form, which hashes the UTF-16 code units themselves: injective for every string.
  if (!LONE_SURROGATE.test(runId)) {
    const bytes = Buffer.from(runId, 'utf8');
    if (bytes.length <= MAX_REVERSIBLE_ID_BYTES) return HEX_PREFIX + bytes.toString('hex');
  }
  return HASH_PREFIX + createHash('sha256').update(Buffer.from(runId, 'utf16le')).digest('hex');
}

/** The log file name (`<stem>.jsonl`) for a run id. */
export function runIdFileName(runId: string): string {
  return runIdStem(runId) + LOG_EXTENSION;
}

/** What a log file name says about its run. */
export type ParsedFileName =
  | { readonly form: 'reversible'; readonly runId: string }
  | { readonly form: 'hashed'; readonly hash: string };

/**
 * Read a log file name back: the run id for the reversible form, the hash for the hashed form
 * (the id itself is then in the log's `run_started` record). `null` for a file that is not a
 * run log of this store.
 */
export function parseRunFileName(fileName: string): ParsedFileName | null {
  const m = FILE_NAME.exec(fileName);
  if (!m) return null;
  const stem = m[1] as string;
  if (stem.startsWith(HASH_PREFIX)) return { form: 'hashed', hash: stem.slice(HASH_PREFIX.length) };
  const bytes = Buffer.from(stem.slice(HEX_PREFIX.length), 'hex');
  let runId: string;
  try {
    runId = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
  // A name we would never have written (e.g. non-canonical UTF-8) is not ours.
  return runIdStem(runId) === stem ? { form: 'reversible', runId } : null;
}
