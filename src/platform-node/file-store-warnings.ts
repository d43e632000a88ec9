/**
 * What a FileStore says about a log's tail it skipped or repaired: a torn last line a read
 * ignored, a torn line cut off before an append, a missing final newline added — each a
 * {@link FileStoreWarning} with its message, never fatal, and where warnings go when the caller
 * names no `onWarning` (`process.emitWarning`, on stderr). Why a torn tail is cut before an
 * append: docs/design/stores-and-leases.md#the-stores and docs/decisions/0008-file-store.md.
 * @module
 */
import type { TailRepair } from './log-text.ts';

/** Something a FileStore noticed and repaired or skipped, never fatal. */
export type FileStoreWarning = {
  /**
   * `torn_tail`: a read found a torn last line (a write cut short by a crash) and ignored it.
   * `tail_truncated`: before appending, that torn line was cut off so new lines never glue onto it.
   * `tail_newline_added`: the last record was complete but lacked its newline; one was added.
   */
  readonly code: 'torn_tail' | 'tail_truncated' | 'tail_newline_added';
  readonly runId: string;
  /** The log file. */
  readonly file: string;
  /** 1-based line number of the affected line. */
  readonly line: number;
  readonly message: string;
};

/** A read of `file` ignored its torn last line, `line`. */
export function tornTailWarning(runId: string, file: string, line: number): FileStoreWarning {
  const message = `ignored a torn last line (line ${line}) of ${file}: a write cut short by a crash`;
  return { code: 'torn_tail', runId, file, line, message };
}

/** What repairing the tail of `file` before an append did (see `repairTail`). */
export function tailRepairWarning(runId: string, file: string, repair: TailRepair): FileStoreWarning {
  const { code, line } = repair;
  const message =
    code === 'tail_truncated'
      ? `cut off a torn last line (line ${line}, ${repair.bytes} bytes) of ${file} before appending`
      : `added the missing newline after the complete last record (line ${line}) of ${file}`;
  return { code, line, runId, file, message };
}

/** Where warnings go when the store was given no `onWarning`: stderr, ending nothing. */
export function emitFileStoreWarning(w: FileStoreWarning): void {
  process.emitWarning(w.message, { code: 'POLYLOOP_FILE_STORE' });
}
