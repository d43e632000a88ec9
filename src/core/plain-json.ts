/**
 * The plain-JSON check of tool schemas and arguments (what a descriptor or an action must be to
 * enter the log), and whether a schema holds a pattern. Every registry needs these, whatever
 * validates its tools' arguments; the JSON Schema walk is `tool-schema.ts`.
 * @module
 */

/**
 * The deepest nesting a tool's parameter schema may have: the record depth limit
 * (`MAX_JSON_DEPTH` in `internal/values.ts`, 100) less the four levels above a descriptor's
 * `parameters` in the `run_started` record (record, snapshot, tools, descriptor). A test keeps
 * the two numbers in step.
 */
export const MAX_SCHEMA_DEPTH = 96;

/** The deepest nesting of tool-call arguments the registry accepts: the record depth limit. */
export const MAX_ARGUMENTS_DEPTH = 100;

/**
 * The first reason `value` is not plain JSON (undefined, a function, a BigInt, a non-finite
 * number, a non-plain object, a cycle, nesting deeper than `maxDepth`), naming its path; null
 * when it is. The same rules and sentences as `jsonProblem` in `internal/values.ts`, which this
 * module may not import.
 */
export function plainJsonProblem(value: unknown, path: string, maxDepth: number): string | null {
  // Arguments are checked at every step: the walk below, which names paths, runs only for a problem.
  if (plainEnough(value, maxDepth)) return null;
  const seen = new Set<object>();
  const walk = (v: unknown, p: string, depth: number): string | null => {
    if (typeof v === 'string' || typeof v === 'boolean' || v === null) return null;
    if (typeof v === 'number') return Number.isFinite(v) ? null : `${p} is ${String(v)}, which JSON cannot hold`;
    if (typeof v !== 'object')
      return `${p} is ${v === undefined ? 'undefined' : `a ${typeof v}`}, which JSON cannot hold`;
    if (depth >= maxDepth) return `${p} is nested more than ${maxDepth} levels deep`;
    if (seen.has(v)) return `${p} refers back to itself (a cycle)`;
    const proto = Object.getPrototypeOf(v) as unknown;
    if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) {
      return `${p} is a ${(v as object).constructor?.name ?? 'non-plain'} object, not plain JSON`;
    }
    seen.add(v);
    const items: [string, unknown][] = Array.isArray(v)
      ? v.map((item, i) => [`${p}[${i}]`, item])
      : Object.entries(v).map(([k, item]) => [`${p}.${k}`, item]);
    for (const [itemPath, item] of items) {
      const problem = walk(item, itemPath, depth + 1);
      if (problem) return problem;
    }
    seen.delete(v);
    return null;
  };
  return walk(value, path, 0);
}

/**
 * Whether `v` is plain JSON within `maxDepth` levels, `depth` levels down already; builds nothing (a
 * cycle runs into the depth). A function of its own, not a closure: arguments are checked every step,
 * and a named closure made at each check costs half a microsecond where code runs through esbuild's
 * `keepNames` (tsx, as the bench runs it).
 */
function plainEnough(v: unknown, maxDepth: number, depth = 0): boolean {
  if (typeof v === 'string' || typeof v === 'boolean' || v === null) return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (typeof v !== 'object' || depth >= maxDepth) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!plainEnough(v[i], maxDepth, depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key of Object.keys(v))
    if (!plainEnough((v as Record<string, unknown>)[key], maxDepth, depth + 1)) return false;
  return true;
}

/**
 * Whether a schema (plain JSON) holds a `pattern` or `patternProperties` anywhere: a regular
 * expression a string from the model would meet. Errs on the side of yes (a property named
 * `pattern` counts).
 */
export function hasPattern(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  if (Array.isArray(schema)) return schema.some(hasPattern);
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'pattern' || key === 'patternProperties' || hasPattern(value)) return true;
  }
  return false;
}
