/**
 * The JSON Schema check of a tool's arguments: the registration checks of its `parameters`
 * (every `$ref` resolving, every keyword of the right kind, a trial run) and the validation by
 * `SchemaValidator` (`@cfworker/json-schema` with linear-time patterns), with the quick check of a
 * flat schema in front (`flat-schema.ts`). Its own module so that
 * a registry of tools that bring their own validator never reaches it (the validator and its
 * pattern matcher are most of the registry's weight): docs/decisions/0081-tools-with-their-own-validator.md.
 * @module
 */
import { dereference } from '@cfworker/json-schema';
import { flatSchemaCheck } from './flat-schema.ts';
import { SchemaValidator } from './schema-validator.ts';
import { schemaProblem } from './tool-schema.ts';

/**
 * The check of one tool's arguments (a plain JSON object): null when they fit, else at most
 * `maxProblems` problems as `location: problem` joined by `; `. Throws when it cannot decide.
 */
export type ArgumentsCheck = (args: object, maxProblems: number) => string | null;

/**
 * Throws the registry's refusal of a schema: `what` is wrong, because of `cause` when given. The
 * registry passes it in, so this module (a chunk loaded on demand) imports nothing of the kernel's.
 */
export type Refuse = (what: string, cause?: { readonly error: unknown }) => never;

/** Wrapper keywords only say "a sub-schema failed"; the leaves say which and why. */
const WRAPPERS = new Set(['properties', 'allOf', 'anyOf', 'oneOf', 'items', '$ref']);

/**
 * The JSON Schema check of a tool's `parameters` (plain JSON, already checked), after the
 * checks that make it unable to throw on the schema's account: every keyword of the right kind,
 * every `$ref` resolving, and a trial run. `$ref`s are checked against the lookup table the
 * validator builds, because an unresolvable `$ref` throws only when arguments reach it. Throws
 * what `refuse` throws.
 */
export function jsonSchemaArgumentsCheck(parameters: object, refuse: Refuse): ArgumentsCheck {
  const walked = structuredClone(parameters) as Record<string, unknown>;
  let lookup: Record<string, unknown> = {};
  try {
    lookup = dereference(walked);
  } catch (e) {
    refuse('parameters has $id or $ref URIs the validator cannot resolve', { error: e });
  }
  // `dereference` records each `$ref`'s absolute URI on its schema object, as `validate` reads it.
  const refResolves = (s: Readonly<Record<string, unknown>>): boolean =>
    lookup[(s['__absolute_ref__'] as string | undefined) || (s['$ref'] as string)] !== undefined;
  const shape = schemaProblem(walked, 'parameters', { refResolves });
  if (shape) refuse(shape);
  let validator: SchemaValidator;
  try {
    // The validator gets its own copy: it annotates the schema object it is given.
    validator = new SchemaValidator(structuredClone(parameters));
    validator.validate({});
  } catch (e) {
    return refuse('parameters is not a schema the validator can apply', { error: e });
  }
  // Built from the copy the checks above accepted (cfworker's marks on it are not enumerable), so
  // a schema they refuse never reaches it; a schema it cannot state has none.
  const quick = flatSchemaCheck(walked);
  return (args, maxProblems) => {
    if (quick?.(args)) return null;
    const result = validator.validate(args);
    if (result.valid) return null;
    const leaves = result.errors.filter((e) => !WRAPPERS.has(e.keyword));
    const shown = (leaves.length > 0 ? leaves : result.errors).slice(0, maxProblems);
    return shown.map((e) => `${e.instanceLocation}: ${e.error}`).join('; ');
  };
}
