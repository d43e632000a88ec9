/**
 * A tool spec (`ToolSpec`, its handler and what the handler is told) and its checks before it enters
 * a registry: every field of the kind the spec declares, and a parameter schema the validator can
 * apply — refused when the registry is built, not in the middle of a run.
 * @module
 */
import { InvalidRequestError } from './errors.ts';
import { unknownKeyProblems } from './options.ts';
import type { OptionKeys } from './options.ts';
import type { JsonObject, ReplayPolicy } from './types.ts';

/**
 * A tool's implementation: takes validated arguments, returns observation text only — so it can
 * neither forge environment completion nor dodge budget counting. Throw `ToolEnvironmentError`
 * to say the environment is broken; reject with `signal.reason` when aborted.
 */
export type ToolHandler = (args: JsonObject, ctx: ToolContext) => Promise<string>;

/**
 * What a handler is told besides its arguments. `resultId` (`s{stepIndex}.action`) is the same
 * every time this action runs, replays included: use it (with `runId`) as an idempotency key, so
 * a `safe` tool whose effect is keyed is safe for real.
 */
export type ToolContext = {
  readonly signal: AbortSignal;
  readonly runId: string;
  readonly stepIndex: number;
  readonly resultId: string;
};

/** One tool. New fields are only ever appended. */
export type ToolSpec = {
  readonly name: string;
  readonly description: string;
  /** A JSON Schema (draft 2020-12) for the arguments object. */
  readonly parameters: JsonObject;
  /** Default `'never'`: an in-flight call is not run again on resume. */
  readonly replayPolicy?: ReplayPolicy;
  /** Default false. True: running this tool successfully ends the run (`tool_completed`). */
  readonly completesRun?: boolean;
  readonly handler?: ToolHandler;
  /** Default false. True: a person approves each call before it runs. */
  readonly needsApproval?: boolean;
  /** `'human'`: a person answers each call; the tool needs no handler. */
  readonly answeredBy?: 'human';
  /**
   * The tool's own validator of its arguments, a Standard Schema (zod, Valibot, ArkType…; what
   * `polyloop/zod`'s `defineTool` sets): it checks the arguments in place of `parameters`, which
   * is then only what the model is shown, and the JSON Schema validator is not needed for this
   * tool — unless `parameters` holds a `pattern`, which is matched in linear time first
   * (docs/decisions/0081-tools-with-their-own-validator.md).
   */
  readonly argumentsSchema?: StandardSchemaV1;
};

/**
 * The part of the Standard Schema interface (version 1, standardschema.dev) a registry calls: a
 * validator it can use without knowing the library that made it.
 */
export type StandardSchemaV1 = {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    /** Its verdict on `value`: `issues` when it does not fit; a promise when it can only answer later. */
    readonly validate: (value: unknown) => StandardResult | Promise<StandardResult>;
  };
};

/** A Standard Schema's verdict: `issues` present means the value does not fit. */
export type StandardResult = {
  readonly value?: unknown;
  readonly issues?: readonly {
    readonly message: string;
    readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
  }[];
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every field of a {@link ToolSpec}: a misspelt `needsAproval` must not leave a tool running unasked. */
const SPEC_FIELDS: OptionKeys<ToolSpec> = {
  name: true,
  description: true,
  parameters: true,
  replayPolicy: true,
  completesRun: true,
  handler: true,
  needsApproval: true,
  answeredBy: true,
  argumentsSchema: true,
};

/** A spec's fields, each of the kind {@link ToolSpec} declares, or an `InvalidRequestError` naming the tool. */
export function checkSpec(spec: unknown): ToolSpec {
  if (!isObject(spec)) throw new InvalidRequestError(`a tool spec must be an object, got ${describeKind(spec)}`);
  const named = typeof spec['name'] === 'string' && spec['name'] !== '';
  const unknown = unknownKeyProblems(spec, Object.keys(SPEC_FIELDS), 'a ToolSpec', { noun: 'a field' });
  if (unknown.length > 0) {
    const source = named ? `tool ${JSON.stringify(spec['name'])}` : 'a tool spec';
    throw new InvalidRequestError(unknown, { source, subject: 'tool spec' });
  }
  if (!named) throw new InvalidRequestError('a tool needs a non-empty name');
  const refuse = (what: string): never => {
    throw new InvalidRequestError(`tool ${JSON.stringify(spec['name'])}: ${what}`);
  };
  if (typeof spec['description'] !== 'string')
    refuse(`description must be a string, got ${describeKind(spec['description'])}`);
  if (!isObject(spec['parameters'])) refuse('parameters must be a JSON Schema object');
  const { replayPolicy, completesRun, handler, needsApproval, answeredBy } = spec;
  if (replayPolicy !== undefined && replayPolicy !== 'safe' && replayPolicy !== 'never')
    refuse('replayPolicy must be "safe" or "never"');
  if (completesRun !== undefined && typeof completesRun !== 'boolean') refuse('completesRun must be a boolean');
  if (handler !== undefined && typeof handler !== 'function') refuse('handler must be a function');
  if (needsApproval !== undefined && typeof needsApproval !== 'boolean') refuse('needsApproval must be a boolean');
  if (answeredBy !== undefined && answeredBy !== 'human') refuse('answeredBy must be "human" or absent');
  if (answeredBy === 'human' && handler !== undefined) refuse('a tool answered by a person has no handler');
  const own = spec['argumentsSchema'];
  if (own !== undefined && typeof (own as StandardSchemaV1)?.['~standard']?.validate !== 'function')
    refuse('argumentsSchema must be a Standard Schema (an object with ["~standard"].validate)');
  return spec as unknown as ToolSpec;
}

export function describeKind(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

export function freezeSchema<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) freezeSchema(v);
    Object.freeze(value);
  }
  return value;
}

type Issue = NonNullable<StandardResult['issues']>[number];

/** A JSON pointer to what an issue is about, as the JSON Schema check writes locations (`#/a/0`). */
function pointerOf(issue: Issue): string {
  const keys = (issue.path ?? []).map((k) => String(typeof k === 'object' && k !== null ? k.key : k));
  return `#${keys.map((k) => `/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')}`;
}

/** A Standard Schema verdict as a `location: problem` list, or null when it fits. */
export function standardIssuesOf(verdict: StandardResult, maxProblems: number): string | null {
  const issues = verdict.issues;
  if (issues === undefined) return null;
  if (issues.length === 0) return '#: the arguments do not fit';
  return issues
    .slice(0, maxProblems)
    .map((i) => `${pointerOf(i)}: ${i.message}`)
    .join('; ');
}
