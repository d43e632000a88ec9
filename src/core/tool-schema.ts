/**
 * Checks of what reaches `tools.ts` from users and models, made so that `ToolRegistry.validate`
 * cannot throw: a structural check of a tool's JSON Schema (draft 2020-12), made once at
 * registration so that a schema the validator would misread or throw on (`properties: 5`,
 * `type: 'banana'`, a `pattern` that is no regular expression, a `$ref` that points nowhere) is
 * refused with its path instead of failing in the middle of a run (the plain-JSON check of
 * schemas and arguments is `plain-json.ts`). Pure and synchronous; no `eval`, so it runs in
 * workerd. Imports only the pattern matcher: `tools.ts` may not import `internal/*`, so this is
 * its own leaf.
 *
 * Why not the official meta-schema: it is written with `$dynamicRef`, which the validator we use
 * (`@cfworker/json-schema`) does not implement, and it would be one more large file to ship. This
 * walks the keywords the validator acts on and checks the kind of each; unknown keywords are
 * annotations and pass unread, as the specification says.
 * @module
 */
import { compilePattern } from './linear-pattern.ts';

/** Options of {@link schemaProblem}. */
export type SchemaCheckOptions = {
  /** Whether a subschema's `$ref` resolves; the caller knows the validator's lookup table. */
  readonly refResolves?: (schema: Readonly<Record<string, unknown>>) => boolean;
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringList = (v: unknown): boolean => Array.isArray(v) && v.every((s) => typeof s === 'string');
const kindOf = (v: unknown): string => {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
};

const SIMPLE_TYPES = new Set(['array', 'boolean', 'integer', 'null', 'number', 'object', 'string']);
const isType = (t: unknown): boolean => typeof t === 'string' && SIMPLE_TYPES.has(t);
const isTypeList = (t: unknown): boolean =>
  Array.isArray(t) && t.length > 0 && t.every(isType) && new Set(t).size === t.length;

/** Keywords whose value is one schema, a non-empty list of schemas, or a map of name → schema. */
const ONE_SCHEMA = ['additionalProperties', 'propertyNames', 'contains', 'not', 'if', 'then', 'else'];
const ONE_SCHEMA_MORE = ['unevaluatedItems', 'unevaluatedProperties', 'additionalItems'];
const SCHEMA_LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_MAP = ['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions'];

/** Keywords whose value must be of one kind: [keywords, test, what the sentence says it must be]. */
const VALUE_KINDS: readonly (readonly [readonly string[], (v: unknown) => boolean, string])[] = [
  [
    ['$id', '$anchor', '$schema', '$comment', '$ref', 'title', 'description', 'format', 'pattern'],
    (v) => typeof v === 'string',
    'a string',
  ],
  [['uniqueItems', 'deprecated', 'readOnly', 'writeOnly'], (v) => typeof v === 'boolean', 'a boolean'],
  [['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum'], (v) => typeof v === 'number', 'a number'],
  [
    ['maxLength', 'minLength', 'maxItems', 'minItems', 'maxContains', 'minContains', 'maxProperties', 'minProperties'],
    (v) => Number.isSafeInteger(v) && (v as number) >= 0,
    'a non-negative integer',
  ],
  [['multipleOf'], (v) => typeof v === 'number' && v > 0, 'a number above 0'],
  [['type'], (v) => isType(v) || isTypeList(v), `one of ${[...SIMPLE_TYPES].join(', ')} or a non-empty array of them`],
  [['required'], isStringList, 'an array of property names'],
  [['enum', 'examples'], Array.isArray, 'an array'],
  [
    ['dependentRequired'],
    (v) => isObject(v) && Object.values(v).every(isStringList),
    'a map of property names to arrays of them',
  ],
];

/** A wrong value as a sentence shows it: short scalars as they are, containers by kind. */
const shown = (v: unknown): string =>
  (typeof v === 'string' && v.length <= 40) || typeof v === 'boolean' || typeof v === 'number'
    ? String(JSON.stringify(v))
    : kindOf(v);

/**
 * Why `source` cannot be a pattern of the argument validator, or null: not a `u`-flag regular
 * expression, or one the linear-time matcher refuses (a backreference or lookaround, which only a
 * backtracking matcher runs; repetition counts that expand past its size limit).
 */
export function regexProblem(source: string, path: string): string | null {
  const compiled = compilePattern(source);
  return 'problem' in compiled ? `${path} ${compiled.problem}` : null;
}

/**
 * The first problem of `schema` as a draft 2020-12 schema the validator can apply, naming its
 * path (`path` is the root's name), or null. Expects a JSON value: run {@link plainJsonProblem}
 * first (cycles and depth are its part).
 */
export function schemaProblem(schema: unknown, path: string, options: SchemaCheckOptions = {}): string | null {
  if (typeof schema === 'boolean') return null;
  if (!isObject(schema)) return `${path} must be a schema (an object or a boolean), got ${kindOf(schema)}`;
  return keywordProblem(schema, path, options) ?? subschemaProblem(schema, path, options);
}

/** Problems of the keywords that hold values, not schemas. */
function keywordProblem(s: Record<string, unknown>, path: string, options: SchemaCheckOptions): string | null {
  for (const [keys, test, must] of VALUE_KINDS) {
    for (const k of keys) {
      const v = s[k];
      if (v !== undefined && !test(v)) return `${path}.${k} must be ${must}, got ${shown(v)}`;
    }
  }
  if (typeof s['pattern'] === 'string') {
    const problem = regexProblem(s['pattern'], `${path}.pattern`);
    if (problem) return problem;
  }
  // The validator does not implement it: a schema using it would be applied more loosely than it reads.
  if (s['$dynamicRef'] !== undefined) return `${path}.$dynamicRef is not supported by the argument validator`;
  const ref = s['$ref'];
  if (typeof ref === 'string' && options.refResolves && !options.refResolves(s)) {
    return `${path}.$ref ${JSON.stringify(ref)} does not resolve to a schema`;
  }
  return null;
}

/** Problems of the keywords that hold schemas, checked recursively. */
function subschemaProblem(s: Record<string, unknown>, path: string, options: SchemaCheckOptions): string | null {
  const sub = (v: unknown, p: string): string | null => schemaProblem(v, p, options);
  for (const k of [...ONE_SCHEMA, ...ONE_SCHEMA_MORE]) {
    const problem = s[k] === undefined ? null : sub(s[k], `${path}.${k}`);
    if (problem) return problem;
  }
  // `items` may still be a list (the pre-2020 tuple form); the validator applies it as such.
  const items = s['items'];
  if (items !== undefined) {
    const problem = Array.isArray(items) ? listProblem(items, `${path}.items`, options) : sub(items, `${path}.items`);
    if (problem) return problem;
  }
  for (const k of SCHEMA_LIST) {
    const list = s[k];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.length === 0)
      return `${path}.${k} must be a non-empty array of schemas, got ${kindOf(list)}`;
    const problem = listProblem(list, `${path}.${k}`, options);
    if (problem) return problem;
  }
  for (const k of SCHEMA_MAP) {
    const problem = s[k] === undefined ? null : mapProblem(s[k], `${path}.${k}`, k === 'patternProperties', options);
    if (problem) return problem;
  }
  return s['dependencies'] === undefined
    ? null
    : dependenciesProblem(s['dependencies'], `${path}.dependencies`, options);
}

function listProblem(list: readonly unknown[], path: string, options: SchemaCheckOptions): string | null {
  for (let i = 0; i < list.length; i++) {
    const problem = schemaProblem(list[i], `${path}[${i}]`, options);
    if (problem) return problem;
  }
  return null;
}

function mapProblem(map: unknown, path: string, keysArePatterns: boolean, options: SchemaCheckOptions): string | null {
  if (!isObject(map)) return `${path} must be an object of schemas, got ${kindOf(map)}`;
  for (const [key, sub] of Object.entries(map)) {
    const keyProblem = keysArePatterns ? regexProblem(key, `${path} key ${JSON.stringify(key)}`) : null;
    const problem = keyProblem ?? schemaProblem(sub, `${path}.${key}`, options);
    if (problem) return problem;
  }
  return null;
}

/** Draft 7's `dependencies`, which the validator still applies: each value a schema or a list of names. */
function dependenciesProblem(deps: unknown, path: string, options: SchemaCheckOptions): string | null {
  if (!isObject(deps)) return `${path} must be an object, got ${kindOf(deps)}`;
  for (const [key, value] of Object.entries(deps)) {
    if (Array.isArray(value)) {
      if (!isStringList(value)) return `${path}.${key} must list property names`;
    } else {
      const problem = schemaProblem(value, `${path}.${key}`, options);
      if (problem) return problem;
    }
  }
  return null;
}
