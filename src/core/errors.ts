/**
 * Error classes. Expected outcomes (budget spent, tool failed, model refused) are values in
 * `RunResult`; these are for programmer and infrastructure faults only.
 * @module
 */

/**
 * `"<ErrorClass>: <message>"` without a stack — what the model and records see of a thrown error.
 * A subclass that does not set its own `name` is named by its constructor.
 */
export function describeError(e: unknown): string {
  // A seam may throw anything, including values whose toString or getters throw themselves.
  try {
    if (!(e instanceof Error)) return `Error: ${String(e)}`;
    const ctor = (e as { constructor?: { name?: unknown } }).constructor?.name;
    const name = e.name === 'Error' && typeof ctor === 'string' && ctor !== '' ? ctor : e.name;
    return `${String(name)}: ${String(e.message)}`;
  } catch {
    return 'Error: (a thrown value that cannot be described)';
  }
}

/**
 * Every error code, in one list: {@link PolyLoopErrorCode} and {@link isPolyLoopError} both read it,
 * so a new code cannot be known to one and forgotten by the other. A code may name several classes
 * (`model_call`: every adapter's failed call; `store_error`: every failing store, the test kit's
 * simulated crash included, so the library treats it as it treats a real one).
 */
const ERROR_CODES = [
  'run_exists',
  'run_not_found',
  'run_identity_mismatch',
  'schema_version',
  'store_error',
  'tool_environment',
  'invalid_request',
  'corrupt_log',
  'run_locked',
  'invalid_input',
  'model_call',
  'tool_arguments',
  'upgrade_refused',
  'contract_violation',
  'viewer_refused',
  'worker_unreachable',
  'missing_directory',
  'stop_requested',
  'lease_lost',
] as const;

/** Machine-readable error codes. */
export type PolyLoopErrorCode = (typeof ERROR_CODES)[number];

/** Base of every error the library throws. Check with {@link isPolyLoopError}, not `instanceof`. */
export class PolyLoopError extends Error {
  override readonly name: string = 'PolyLoopError';
  readonly code: PolyLoopErrorCode;
  constructor(code: PolyLoopErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

const CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/**
 * True for any PolyLoop error, also across realms and duplicated bundles (Durable Objects,
 * iframes) where `instanceof` fails. Pass `code` to check for one kind.
 */
export function isPolyLoopError(e: unknown, code?: PolyLoopErrorCode): e is PolyLoopError {
  if (typeof e !== 'object' || e === null) return false;
  const { name, code: c } = e as { name?: unknown; code?: unknown };
  if (typeof name !== 'string' || !name.endsWith('Error') || typeof c !== 'string' || !CODES.has(c)) return false;
  return code === undefined || c === code;
}

/** `run` was called on a runId whose log is not empty. */
export class RunExistsError extends PolyLoopError {
  override readonly name = 'RunExistsError';
  readonly runId: string;
  constructor(runId: string) {
    super('run_exists', `run ${JSON.stringify(runId)} already has a log; use resume() to continue it`);
    this.runId = runId;
  }
}

/** `resume` was called on a runId with an empty log. */
export class RunNotFoundError extends PolyLoopError {
  override readonly name = 'RunNotFoundError';
  readonly runId: string;
  constructor(runId: string) {
    super('run_not_found', `run ${JSON.stringify(runId)} has no log; use run() to start it`);
    this.runId = runId;
  }
}

/** The stored parameter snapshot differs from the current definition + request. */
export class RunIdentityMismatchError extends PolyLoopError {
  override readonly name = 'RunIdentityMismatchError';
  readonly runId: string;
  /** Dotted paths of the snapshot keys that differ, sorted. */
  readonly differingKeys: readonly string[];
  /** Whether the run has ended: an ended run is never upgraded. */
  readonly ended: boolean;
  constructor(runId: string, differingKeys: readonly string[], options: { readonly ended?: boolean } = {}) {
    const how = options.ended
      ? 'the run has ended, and an ended run is never upgraded'
      : 'to go on under the new parameters, resume with { upgrade: { reason } } (see docs/upgrades.md)';
    super(
      'run_identity_mismatch',
      `run ${JSON.stringify(runId)} was started with different parameters; ` +
        `differing keys: ${differingKeys.join(', ')}; ${how}`,
    );
    this.runId = runId;
    this.differingKeys = differingKeys;
    this.ended = options.ended === true;
  }
}

/**
 * `resume` with `upgrade` would change what the run's interrupted step or open request depends
 * on: remove a tool its action names, or make that tool's `never` replay policy `safe`. Nothing
 * was written; the run resumes as it was with its old parameters.
 */
export class UpgradeRefusedError extends PolyLoopError {
  override readonly name = 'UpgradeRefusedError';
  readonly runId: string;
  /** The tool the refusal is about. */
  readonly tool: string;
  constructor(runId: string, tool: string, detail: string) {
    super('upgrade_refused', `run ${JSON.stringify(runId)} cannot be upgraded: ${detail}`);
    this.runId = runId;
    this.tool = tool;
  }
}

/** A record carries a schema major this library cannot read. */
export class SchemaVersionError extends PolyLoopError {
  override readonly name = 'SchemaVersionError';
  readonly found: unknown;
  constructor(found: unknown, supportedMajor: number) {
    super(
      'schema_version',
      `record schema version ${JSON.stringify(found)} is not supported (this library reads ${supportedMajor}.x)`,
    );
    this.found = found;
  }
}

/** The store failed; `cause` is the store's own error. Nothing more was written. */
export class StoreError extends PolyLoopError {
  override readonly name = 'StoreError';
  readonly runId: string;
  readonly operation: string;
  constructor(runId: string, operation: string, cause: unknown) {
    const detail = describeError(cause);
    super('store_error', `store ${operation} failed for run ${JSON.stringify(runId)}: ${detail}`, { cause });
    this.runId = runId;
    this.operation = operation;
  }
}

/** Thrown by a tool handler to say "the environment is broken" (outcome `env_error`). */
export class ToolEnvironmentError extends PolyLoopError {
  override readonly name = 'ToolEnvironmentError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('tool_environment', message, options);
  }
}

/** One problem of a definition or request: where it is, and what is wrong there. */
export type RequestProblem = {
  /** Dotted path of the field (`request.budget.maxSteps`, `model.call`); empty when the whole value is wrong. */
  readonly path: string;
  /** What is wrong, without the path: `must be a positive integer, got undefined`. */
  readonly message: string;
};

/** `path message`, the problem as one sentence. */
const problemLine = (p: RequestProblem): string => (p.path === '' ? p.message : `${p.path} ${p.message}`);

/**
 * A definition or request is malformed (missing field, non-positive budget, …). `problems` lists
 * every problem found, each with its path. The message is that one problem as a sentence, or,
 * for several, `"<n> problems with the <subject>:"` and one `- <path> <message>` line each;
 * `source` (the function that refuses, as `defineAgent`) leads it when given.
 */
export class InvalidRequestError extends PolyLoopError {
  override readonly name = 'InvalidRequestError';
  /** Every problem found, in the order of the fields; one, with an empty path, for an error made from a message. */
  readonly problems: readonly RequestProblem[];
  constructor(
    problems: string | readonly RequestProblem[],
    options?: { cause?: unknown; subject?: string; source?: string },
  ) {
    const list: readonly RequestProblem[] = typeof problems === 'string' ? [{ path: '', message: problems }] : problems;
    const body =
      list.length === 1 && list[0]
        ? problemLine(list[0])
        : [
            `${list.length} problems with the ${options?.subject ?? 'request'}:`,
            ...list.map((p) => `- ${problemLine(p)}`),
          ].join('\n');
    super(
      'invalid_request',
      options?.source ? `${options.source}: ${body}` : body,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.problems = Object.freeze(list.map((p) => Object.freeze({ path: p.path, message: p.message })));
  }
}

/** A log line in the middle of a log cannot be decoded. */
export class CorruptLogError extends PolyLoopError {
  override readonly name = 'CorruptLogError';
  /** 1-based line (or record) number. */
  readonly line: number;
  /** Where the log lives, when the store knows (a file path, a database name). */
  readonly source: string | null;
  constructor(line: number, reason: string, options?: { cause?: unknown; source?: string }) {
    const where = options?.source ? `${options.source}:${line}` : `line ${line}`;
    super('corrupt_log', `corrupt run log at ${where}: ${reason}`, options);
    this.line = line;
    this.source = options?.source ?? null;
  }
}

/** Another driver holds the run's lease. */
export class RunLockedError extends PolyLoopError {
  override readonly name = 'RunLockedError';
  readonly runId: string;
  constructor(runId: string, detail?: string) {
    super(
      'run_locked',
      `run ${JSON.stringify(runId)} is being driven by another process or tab${detail ? ` (${detail})` : ''}`,
    );
    this.runId = runId;
  }
}

/**
 * A reply to a run's input request that does not fit: no request is open, it names
 * another resultId, or the request does not accept its kind. Nothing was written.
 */
export class InvalidInputError extends PolyLoopError {
  override readonly name = 'InvalidInputError';
  readonly runId: string;
  /**
   * `'arguments'` when the reply fits its request but the arguments it edits are refused (a bad
   * request, where the rest is a reply that does not fit the run as it stands); else null.
   */
  readonly field: 'arguments' | null;
  constructor(runId: string, detail: string, options: { readonly field?: 'arguments' } = {}) {
    super('invalid_input', `run ${JSON.stringify(runId)}: ${detail}`);
    this.runId = runId;
    this.field = options.field ?? null;
  }
}

/**
 * A person or process asked the run to stop (`requestStop`): the reason the run's signal, and every
 * handler's, aborts with. `run`/`resume` do not reject with it: the run ends `cancelled` and says so
 * in `run_ended.stopRequest` (docs/design/control.md#a-stop-that-reaches-any-driver).
 */
export class StopRequestedError extends PolyLoopError {
  override readonly name = 'StopRequestedError';
  readonly runId: string;
  readonly stop: { readonly reason?: string };
  constructor(runId: string, stop: { readonly reason?: string } = {}) {
    const why = stop.reason === undefined ? '' : `: ${stop.reason}`;
    super('stop_requested', `run ${JSON.stringify(runId)} was asked to stop${why}`);
    this.runId = runId;
    this.stop = stop.reason === undefined ? {} : { reason: stop.reason };
  }
}

/**
 * The driver lost the run's lease (it stalled past it, or another driver took the run over): the
 * step in progress is aborted and this driver writes nothing more to the log.
 */
export class LeaseLostError extends PolyLoopError {
  override readonly name = 'LeaseLostError';
  readonly runId: string;
  constructor(runId: string, detail: string) {
    super(
      'lease_lost',
      `run ${JSON.stringify(runId)}: this driver lost the run's lease (${detail}); it wrote nothing more`,
    );
    this.runId = runId;
  }
}
