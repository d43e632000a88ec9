/**
 * The check of a tool's arguments: its own validator (a Standard Schema), or its JSON Schema
 * `parameters` through `json-schema-tools.ts`, a module loaded on demand by the first registry with
 * a tool that needs it (docs/decisions/0081-tools-with-their-own-validator.md).
 * @module
 */
import { describeError, InvalidRequestError } from './errors.ts';
import type { ArgumentsCheck, Refuse } from './json-schema-tools.ts';
import { hasPattern, MAX_SCHEMA_DEPTH, plainJsonProblem } from './plain-json.ts';
import { standardIssuesOf } from './tool-spec.ts';
import type { ToolSpec } from './tool-spec.ts';

type JsonSchemaTools = typeof import('./json-schema-tools.ts');

/**
 * The JSON Schema module once it has arrived: loaded on demand, by the first registry with a tool
 * that needs it (docs/decisions/0081-tools-with-their-own-validator.md).
 */
let jsonSchema: JsonSchemaTools | null = null;
let arriving: Promise<JsonSchemaTools> | null = null;

/** The JSON Schema module, loaded once (a failed load is tried again at the next call). */
export function loadJsonSchema(): Promise<JsonSchemaTools> {
  arriving ??= import('./json-schema-tools.ts').then(
    (m) => (jsonSchema = m),
    (e: unknown) => {
      // A chunk that failed to load (a network error in a page) is asked for again next time.
      arriving = null;
      throw e;
    },
  );
  return arriving;
}

/** What validate throws (so answers "could not be checked") for a JSON Schema check still on its way. */
function notLoaded(): never {
  throw new Error("the JSON Schema validator has not loaded yet (await the registry's loaded())");
}

/** Compiles one tool's JSON Schema check once the module has arrived; throws as `of` would have. */
export type Compile = (m: JsonSchemaTools) => void;

/**
 * The check of one tool's arguments. `parameters` must be plain JSON whatever checks them (a
 * descriptor enters the snapshot). A tool with its own validator needs the JSON Schema one only
 * for a `pattern`: matched first in linear time, so no string the model chose meets the own
 * validator's backtracking engine unmatched (docs/decisions/0051-linear-time-patterns.md).
 */
export function argumentsCheckOf(spec: ToolSpec, later: Compile[]): ArgumentsCheck {
  const problem = plainJsonProblem(spec.parameters, 'parameters', MAX_SCHEMA_DEPTH);
  if (problem) throw new InvalidRequestError(`tool ${JSON.stringify(spec.name)}: ${problem}`);
  const own = spec.argumentsSchema;
  if (own === undefined) return jsonSchemaCheckOf(spec, later);
  const patterns = hasPattern(spec.parameters) ? jsonSchemaCheckOf(spec, later) : null;
  let fallback: ArgumentsCheck | null = patterns;
  return (args, maxProblems) => {
    const mismatch = patterns?.(args, maxProblems) ?? null;
    if (mismatch !== null) return mismatch;
    const verdict = own['~standard'].validate(args);
    if (!isPromise(verdict)) return standardIssuesOf(verdict, maxProblems);
    // Only a later answer (an async refinement): the JSON Schema decides here, as for a tool
    // without its own validator, and the handler's own parse (defineTool's) has the last word;
    // this answer is not waited for, so its failure is nobody's to report.
    verdict.catch(() => undefined);
    // Before the JSON Schema module arrives nothing can decide this call: it cannot be checked
    // (a failed load is tried again at the next such call, or by the next registry that needs it).
    if (!jsonSchema) loadJsonSchema().catch(() => undefined);
    fallback ??= jsonSchema?.jsonSchemaArgumentsCheck(spec.parameters, refuserOf(spec.name)) ?? null;
    return (fallback ?? notLoaded())(args, maxProblems);
  };
}

/**
 * The JSON Schema check of `spec`'s arguments: compiled now when the module is here (every check
 * `of` has made, refused at once), else on its arrival, from a copy of `parameters` as `of` saw it.
 */
function jsonSchemaCheckOf(spec: ToolSpec, later: Compile[]): ArgumentsCheck {
  if (jsonSchema) return jsonSchema.jsonSchemaArgumentsCheck(spec.parameters, refuserOf(spec.name));
  const [parameters, refuse] = [structuredClone(spec.parameters), refuserOf(spec.name)];
  let compiled: ArgumentsCheck | null = null;
  later.push((m) => {
    compiled = m.jsonSchemaArgumentsCheck(parameters, refuse);
  });
  return (args, maxProblems) => (compiled ?? notLoaded())(args, maxProblems);
}

/** A schema of tool `name` refused, as `of` refuses it (passed in: the module loaded on demand imports no errors). */
const refuserOf =
  (name: string): Refuse =>
  (what, cause) => {
    const because = cause ? ` (${describeError(cause.error)})` : '';
    throw new InvalidRequestError(`tool ${JSON.stringify(name)}: ${what}${because}`);
  };

const isPromise = (v: unknown): v is Promise<unknown> => typeof (v as { then?: unknown } | null)?.then === 'function';
