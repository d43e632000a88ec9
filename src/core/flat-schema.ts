/**
 * A quick "these arguments fit" for the usual tool schema: an object of named properties, each a
 * primitive type, an `enum` or a bound. It answers true only where the JSON Schema validator says
 * valid; false means "ask the validator", which then decides and says why, in its own words. A
 * schema it does not fully understand gets no quick check at all
 * (docs/decisions/0087-quick-check-of-flat-schemas.md).
 * @module
 */
import { ucs2length } from '@cfworker/json-schema';

/** Whether plain-JSON arguments fit: true only where the validator would say valid. */
export type FlatCheck = (args: object) => boolean;

type Schema = Readonly<Record<string, unknown>>;

/** Keywords the validator never reads: whatever they hold, they decide nothing. */
const NOTES = ['title', 'description', '$comment', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly'];
const ROOT = ['type', 'properties', 'required', 'additionalProperties', '$schema', ...NOTES];
const BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength'] as const;
/** A stated rule's bounds, read as numbers: a bound left out is undefined, which no comparison is true of. */
type Bounds = Record<(typeof BOUNDS)[number], number>;
const TYPES = ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'];

const isRecord = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPrimitive = (v: unknown): boolean =>
  v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const isType = (t: unknown): boolean => TYPES.includes(t as string);

/**
 * The quick check of `schema` (plain JSON, as a tool's `parameters`, kept and read as it is: the
 * caller hands over a copy nobody changes), or null when it holds anything but `type: 'object'`,
 * `properties` of primitive rules, `required` and a boolean `additionalProperties` (and keywords
 * that only annotate, `$schema` at its root).
 */
export function flatSchemaCheck(schema: unknown): FlatCheck | null {
  if (!isRecord(schema) || !Object.keys(schema).every((k) => ROOT.includes(k))) return null;
  const { type = 'object', properties = {}, required = [], additionalProperties = true } = schema;
  if (type !== 'object' || !isRecord(properties) || typeof additionalProperties !== 'boolean') return null;
  if (!Array.isArray(required) || !required.every((k) => typeof k === 'string')) return null;
  const names = Object.keys(properties);
  const rules = names.map((name) => properties[name]);
  if (!rules.every(stated)) return null;
  return (args) => {
    for (let i = 0; i < required.length; i++) if (!Object.hasOwn(args, required[i] as string)) return false;
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      if (Object.hasOwn(args, name) && !fits(rules[i] as Schema | true, (args as Schema)[name])) return false;
    }
    // As the validator walks them: every enumerable key, own or not, must be an own, named property.
    if (!additionalProperties)
      for (const key in args) if (!Object.hasOwn(args, key) || !names.includes(key)) return false;
    return true;
  };
}

/** Whether one property's schema is a rule `fits` reads in full. */
function stated(s: unknown): boolean {
  if (s === true) return true;
  if (!isRecord(s)) return false;
  for (const [key, v] of Object.entries(s)) {
    const ok =
      key === 'type'
        ? Array.isArray(v)
          ? v.every(isType)
          : isType(v)
        : key === 'enum'
          ? Array.isArray(v) && v.every(isPrimitive)
          : key === 'const'
            ? isPrimitive(v)
            : (BOUNDS as readonly string[]).includes(key)
              ? typeof v === 'number'
              : NOTES.includes(key);
    if (!ok) return false;
  }
  return true;
}

/** Whether a plain-JSON value meets a stated rule, as the validator's type, enum, const and bound checks read it. */
function fits(s: Schema | true, v: unknown): boolean {
  if (s === true) return true;
  const kind = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
  const { type, enum: values, const: constant } = s;
  if (type !== undefined && !(Array.isArray(type) ? type.some((t) => typeFits(t, kind, v)) : typeFits(type, kind, v)))
    return false;
  // Compared by identity: an object or an array never equals a primitive, as the validator finds too.
  if ((values !== undefined && !(values as unknown[]).includes(v)) || (constant !== undefined && constant !== v))
    return false;
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength } = s as Schema & Bounds;
  if (kind === 'number') {
    const n = v as number;
    return !(n < minimum || n > maximum || n <= exclusiveMinimum || n >= exclusiveMaximum);
  }
  if (kind !== 'string' || (minLength === undefined && maxLength === undefined)) return true;
  const length = ucs2length(v as string);
  return !(length < minLength || length > maxLength);
}

/** Whether `v`, of JSON kind `kind`, is of type `t`: an integer is a number whose remainder by 1 is 0. */
function typeFits(t: unknown, kind: string, v: unknown): boolean {
  return t === kind || (t === 'integer' && kind === 'number' && (v as number) % 1 === 0);
}
