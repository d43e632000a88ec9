/**
 * Record encoding and decoding, public so downstream code can read logs without running the
 * library. One record = one line of JSON. Decoding checks the schema major
 * (docs/design/records-and-recovery.md#records, docs/log-format.md#versions).
 * @module
 */
import { CorruptLogError, SchemaVersionError } from './errors.ts';
import { checkOptionKeys } from './options.ts';
import { RECORD_VERSION, STEP_DEFAULTS, STEP_FIELDS } from './types.ts';
import type { JsonValue, LogRecord } from './types.ts';
import { canonicalOrder, isExactly, ORDER, REPLY_ORDER } from './record-order.ts';
import {
  checkActionsIntent,
  checkChildRequest,
  checkOutcome,
  checkStepCalls,
  checkStepFields,
  isBool,
  isChange,
  isForkOrigin,
  isInt,
  isObj,
  isStopRequest,
  isStoredRequest,
  isStrOrNull,
  isTraceparent,
  isUsageOrNull,
  KINDS,
  need,
  REASONS,
  RESOLUTIONS,
  Shape,
  VERSION,
} from './record-fields.ts';
import type { Obj } from './record-fields.ts';
import { inflate, leanOf, NO_CONTEXT, StepContext } from './lean-records.ts';
import { readCommon } from './lean-common.ts';

export { canonicalJson } from './record-order.ts';

/** The record schema major this library reads and writes (see `RECORD_VERSION` for history). */
export const RECORD_MAJOR = 1;

/**
 * Encode one record as a single line of JSON (no trailing newline), its keys in the canonical
 * order of its kind: one record has one encoding, whoever built the object.
 */
export function encodeRecord(rec: LogRecord): string {
  if (!isObj(rec) || typeof rec['kind'] !== 'string') return JSON.stringify(rec);
  const r = canonicalOrder(rec as unknown as Obj);
  if (r['v'] !== '1.0') return JSON.stringify(r);
  // A 1.0 writer wrote none of the fields 1.1 added: leave out the defaults decoding filled in, so an
  // old log exports as the bytes it was (docs/log-format.md#versions).
  return JSON.stringify(r, function (this: unknown, k: string, v: unknown) {
    const added = this === r ? k === 'usage' && isZero(v) : v === null && (this === r['reply'] || this === r['step']);
    return added && ADDED_IN_11.has(k) ? undefined : v;
  });
}

const isZero = (u: unknown): boolean =>
  isObj(u) && u['inputTokens'] === 0 && u['outputTokens'] === 0 && Object.keys(u).length === 2;

const ADDED_IN_11: ReadonlySet<string> = new Set(['finishReason', 'usage', 'providerMetadata']);

/**
 * Encodes and decodes the records of one run log in the log's order: the lean form of record
 * version 1.2 (docs/log-format.md#the-lean-form), in which a record leaves out what the records of
 * its step before it already hold — the model's reply is written once, in its `result` record.
 * Records of older versions are written as `encodeRecord` writes them, byte for byte.
 * One codec follows one log: encode or decode each record once, in order. A codec that joins a log
 * part way (a store that did not write its earlier records) writes fields out in full until the
 * next step record; that is always correct, only longer.
 *
 * @example
 * const codec = new LogCodec();
 * const lines = records.map((r) => codec.encode(r));
 * const back = new LogCodec();
 * const same = lines.map((l) => back.decode(l));
 */
export class LogCodec {
  readonly #ctx = new StepContext();

  /** `rec` as the next line of this codec's log (no trailing newline). */
  encode(rec: LogRecord): string {
    if (!isObj(rec) || rec.v !== RECORD_VERSION) {
      const text = encodeRecord(rec);
      // A reader follows every record of the log, whatever its version: so does the writer.
      if (isObj(rec)) this.#ctx.note(rec);
      return text;
    }
    const text = JSON.stringify(leanOf(canonicalOrder(rec as unknown as Obj), this.#ctx));
    this.#ctx.note(rec);
    return text;
  }

  /** The next line of this codec's log, decoded (as `decodeRecord`, its left-out fields filled back in). */
  decode(text: string): LogRecord {
    return this.#read(text, 1, undefined);
  }

  /** Decode the line `line` of `source`: what `decodeLog` reads each line with. */
  static lineOf(codec: LogCodec, text: string, line: number, source: string | undefined): LogRecord {
    return codec.#read(text, line, source);
  }

  #read(text: string, line: number, source: string | undefined): LogRecord {
    const rec = decodeAt(text, line, source, this.#ctx);
    this.#ctx.note(rec);
    return rec;
  }
}

/**
 * Records of one run log as NDJSON, in order, each line as {@link LogCodec} writes it (the lean form
 * of 1.2), each ending in `\n`: what `exportRun` returns.
 */
export function encodeLog(records: readonly LogRecord[]): string {
  const codec = new LogCodec();
  let out = '';
  for (const rec of records) out += `${codec.encode(rec)}\n`;
  return out;
}

function checkBody(r: Obj): Obj {
  switch (r['kind']) {
    case 'run_started':
      need(typeof r['runId'] === 'string', 'run_started.runId must be a string');
      need(isObj(r['snapshot']), 'run_started.snapshot must be an object');
      need(typeof r['snapshotHash'] === 'string', 'run_started.snapshotHash must be a string');
      need(
        r['request'] === undefined || isStoredRequest(r['request']),
        'run_started.request must hold cancelGraceMs and the defaulted field names',
      );
      need(
        r['forkedFrom'] === undefined || isForkOrigin(r['forkedFrom']),
        'run_started.forkedFrom must hold runId and atStep',
      );
      need(
        r['traceparent'] === undefined || isTraceparent(r['traceparent']),
        'run_started.traceparent must be a W3C traceparent (00-{32 hex}-{16 hex}-{2 hex})',
      );
      return canonicalOrder(r);
    case 'intent':
      need(
        r['intent'] === 'model_call' || r['intent'] === 'action' || r['intent'] === 'actions',
        'intent.intent must be "model_call", "action" or "actions"',
      );
      need(isInt(r['stepIndex']), 'intent.stepIndex must be a non-negative integer');
      need(typeof r['resultId'] === 'string', 'intent.resultId must be a string');
      if (r['intent'] === 'actions') {
        checkActionsIntent(r);
        return canonicalOrder(r);
      }
      need(
        r['replayPolicy'] === 'safe' || r['replayPolicy'] === 'never',
        'intent.replayPolicy must be "safe" or "never"',
      );
      if (r['intent'] === 'action')
        need(isObj(r['decision']) && r['decision']['kind'] === 'action', 'action intent must hold an action decision');
      else need(isInt(r['callSeq']), 'intent.callSeq must be a non-negative integer');
      return canonicalOrder(r);
    case 'result': {
      need(typeof r['resultId'] === 'string', 'result.resultId must be a string');
      need(isInt(r['stepIndex']) && isInt(r['callSeq']), 'result.stepIndex and callSeq must be non-negative integers');
      const reply = r['reply'];
      need(
        isObj(reply) && typeof reply['text'] === 'string' && isStrOrNull(reply['callId']),
        'result.reply must hold text and callId',
      );
      const rp = reply as Obj;
      need(isUsageOrNull(rp['usage']), 'result.reply.usage must be null or non-negative integer token counts');
      if (isExactly(r, ORDER['result'] as readonly string[]) && isExactly(rp, REPLY_ORDER)) return r;
      return canonicalOrder({
        ...r,
        reply: {
          reasoning: null,
          toolCalls: [],
          content: null,
          finishReason: null,
          usage: null,
          providerMetadata: null,
          ...rp,
        },
      });
    }
    case 'step': {
      const step = r['step'];
      need(
        isObj(step) && isInt((step as Obj)['stepIndex']) && typeof (step as Obj)['decision'] === 'string',
        'step.step must hold stepIndex and decision',
      );
      const ar = r['actionResult'] ?? null;
      need(
        ar === null || (isObj(ar) && typeof ar['resultId'] === 'string' && isObj(ar['outcome'])),
        'step.actionResult must be null or hold resultId and outcome',
      );
      const s = step as Obj;
      need(isUsageOrNull(s['usage']), 'step.step.usage must be null or non-negative integer token counts');
      checkStepFields(s);
      if (ar !== null) checkOutcome((ar as Obj)['outcome'] as Obj);
      if (s['calls'] !== undefined) checkStepCalls(s['calls']);
      need(
        s['childRunId'] === undefined || typeof s['childRunId'] === 'string',
        'step.step.childRunId must be a string',
      );
      // Written complete, in order, by this version (the common case): nothing to add or move.
      if (isExactly(r, ORDER['step'] as readonly string[]) && isExactly(s, STEP_FIELDS)) return r;
      return canonicalOrder({ ...r, actionResult: ar, step: { ...STEP_DEFAULTS, callSeq: s['stepIndex'], ...s } });
    }
    case 'run_ended':
      need(
        typeof r['stopReason'] === 'string' && REASONS.has(r['stopReason']),
        'run_ended.stopReason is not a known stop reason',
      );
      need(
        isInt(r['steps']) && isInt(r['validActions']),
        'run_ended.steps and validActions must be non-negative integers',
      );
      // Readers report these as they stand (the CLI, the Workers status, resume of an ended run).
      need(
        r['eventDeliveryFailures'] === undefined || isInt(r['eventDeliveryFailures']),
        'run_ended.eventDeliveryFailures must be a non-negative integer',
      );
      need(
        isUsageOrNull(r['usage']) && (r['finalAnswer'] === undefined || isStrOrNull(r['finalAnswer'])),
        'run_ended.usage or finalAnswer has the wrong type',
      );
      need(
        r['stopRequest'] === undefined || isStopRequest(r['stopRequest']),
        'run_ended.stopRequest must be {} or hold a string reason',
      );
      return canonicalOrder({
        finalAnswer: null,
        eventDeliveryFailures: 0,
        usage: { inputTokens: 0, outputTokens: 0 },
        endedAt: '',
        ...r,
      });
    case 'input_request': {
      need(
        isInt(r['stepIndex']) && typeof r['resultId'] === 'string',
        'input_request.stepIndex and resultId are required',
      );
      const q = r['request'];
      need(
        isObj(q) &&
          ['approval', 'answer', 'settle', 'child'].includes(q['kind'] as string) &&
          (q['target'] === 'action' || q['target'] === 'model_call'),
        'input_request.request needs a kind and a target',
      );
      const d = (q as Obj)['decision'] ?? null;
      need(
        d === null || (isObj(d) && d['kind'] === 'action'),
        'input_request.request.decision must be null or an action decision',
      );
      checkChildRequest(q as Obj, 'input_request.request');
      return canonicalOrder({ requestedAt: '', ...r, request: { ...(q as Obj), decision: d } });
    }
    case 'input': {
      need(isInt(r['stepIndex']) && typeof r['resultId'] === 'string', 'input.stepIndex and resultId are required');
      const reply = r['reply'];
      need(
        isObj(reply) && typeof reply['kind'] === 'string' && reply['resultId'] === r['resultId'],
        'input.reply needs a kind and the resultId of its request',
      );
      return canonicalOrder({ receivedAt: '', ...r });
    }
    case 'upgrade': {
      need(
        isInt(r['stepIndex']) && typeof r['reason'] === 'string' && typeof r['snapshotHash'] === 'string',
        'upgrade.stepIndex, reason and snapshotHash are required',
      );
      const changes = r['changes'];
      need(
        isObj(changes) && Object.values(changes).every(isChange),
        'upgrade.changes must map snapshot keys to { before, after, value? }',
      );
      need(isStoredRequest(r['request']), 'upgrade.request must hold cancelGraceMs and the defaulted field names');
      need(typeof r['at'] === 'string', 'upgrade.at must be a string');
      return canonicalOrder(r);
    }
    case 'call_result':
      need(
        isInt(r['stepIndex']) && typeof r['resultId'] === 'string' && isBool(r['completedRun']),
        'call_result.stepIndex, resultId and completedRun are required',
      );
      need(isObj(r['outcome']), 'call_result.outcome must be an object');
      checkOutcome(r['outcome'] as Obj);
      need(
        (r['childRunId'] === undefined || typeof r['childRunId'] === 'string') && isUsageOrNull(r['usage']),
        'call_result.childRunId must be a string and usage token counts',
      );
      return canonicalOrder(r);
    case 'resumed':
      need(isInt(r['stepIndex']) && typeof r['at'] === 'string', 'resumed.stepIndex and at are required');
      need(
        r['resolution'] === null || RESOLUTIONS.has(r['resolution'] as string),
        'resumed.resolution must be null or how the interrupted step goes on',
      );
      return canonicalOrder(r);
    default:
      throw new Shape('unknown kind');
  }
}

/**
 * Decode one record on its own. Throws `SchemaVersionError` for a missing or foreign `v` major and
 * `CorruptLogError` (line 1) for text that is not a record. Unknown extra fields are kept;
 * missing optional fields take their defaults. A 1.2 step record or action intent written in the
 * lean form refers to the records of its step before it: read a log with `decodeLog` or a
 * {@link LogCodec}, which fill those fields in; read alone, they take their defaults.
 */
export function decodeRecord(text: string): LogRecord {
  return decodeAt(text, 1, undefined, NO_CONTEXT);
}

/**
 * Decode one line of a log at `ctx` by the general reader alone, without the common-shape path
 * (`lean-common.ts`): what that path is held to in its tests.
 */
export function decodeGeneral(text: string, ctx: StepContext): LogRecord {
  const rec = decodeAt(text, 1, undefined, ctx, false);
  ctx.note(rec);
  return rec;
}

function decodeAt(text: string, line: number, source: string | undefined, ctx: StepContext, common = true): LogRecord {
  const opts = source === undefined ? {} : { source };
  let parsed: JsonValue;
  try {
    parsed = JSON.parse(text) as JsonValue;
  } catch (cause) {
    throw new CorruptLogError(line, 'not valid JSON', { ...opts, cause });
  }
  if (!isObj(parsed)) throw new CorruptLogError(line, 'a record must be a JSON object', opts);
  const v = parsed['v'];
  if (v !== RECORD_VERSION) {
    const m = typeof v === 'string' ? VERSION.exec(v) : null;
    if (!m || Number(m[1]) !== RECORD_MAJOR) throw new SchemaVersionError(v ?? null, RECORD_MAJOR);
  }
  if (typeof parsed['kind'] !== 'string' || !KINDS.has(parsed['kind'])) {
    throw new CorruptLogError(line, `unknown record kind ${JSON.stringify(parsed['kind'] ?? null)}`, opts);
  }
  if (common && v === RECORD_VERSION) {
    const read = readCommon(parsed, ctx);
    if (read !== null) return read as LogRecord;
  }
  try {
    return checkBody(v === RECORD_VERSION ? inflate(parsed, ctx) : parsed) as LogRecord;
  } catch (e) {
    if (e instanceof Shape) throw new CorruptLogError(line, e.message, opts);
    throw e;
  }
}

/** What {@link decodeLog} found. */
export type DecodedLog = {
  readonly records: readonly LogRecord[];
  /** 1-based number of a torn last line that was dropped, or null. */
  readonly tornLine: number | null;
};

const DECODE_OPTIONS = { source: true } as const;

/**
 * Decode a whole log (JSONL text or its lines). A last line that is not valid JSON is a torn
 * write (the process died mid-append): it is dropped and reported in `tornLine`. A bad line
 * anywhere else throws `CorruptLogError` with its line number. Blank lines are not allowed
 * except a trailing newline.
 */
export function decodeLog(input: string | readonly string[], opts?: { readonly source?: string }): DecodedLog {
  if (opts !== undefined) checkOptionKeys(opts, DECODE_OPTIONS, 'decodeLog');
  const lines = typeof input === 'string' ? input.split('\n') : [...input];
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const records: LogRecord[] = [];
  const codec = new LogCodec();
  let tornLine: number | null = null;
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] as string;
    const isLast = i === lines.length - 1;
    if (isLast && !isCompleteJson(text)) {
      tornLine = i + 1;
      break;
    }
    records.push(LogCodec.lineOf(codec, text, i + 1, opts?.source));
  }
  return { records, tornLine };
}

function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
