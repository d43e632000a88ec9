/**
 * `jsonSchemaCheck`: the tool-argument validator for other values from outside. Its own module so
 * its declaration names no third-party type (the validator's does: cfworker's schema types).
 * @module
 */
import type { Schema, ValidationResult } from '@cfworker/json-schema';
import { SchemaValidator } from './schema-validator.ts';

/**
 * A reusable check of values against a JSON Schema (draft 2020-12) whose regular expressions
 * match in linear time, for values from outside a run that meet a schema from outside too (an MCP
 * server's tool output). Returns the first problems as one sentence, or null when `value` fits.
 * The schema is copied; a pattern that cannot be matched in linear time (a backreference,
 * lookaround) makes the check answer that, rather than run it.
 *
 * @example
 * const check = jsonSchemaCheck({ type: 'object', properties: { id: { type: 'string', pattern: '^[a-z]+$' } } });
 * check({ id: 'abc' }); // null
 */
export function jsonSchemaCheck(schema: unknown): (value: unknown) => string | null {
  const validator = new SchemaValidator(structuredClone(schema) as Schema | boolean);
  return (value) => {
    let result: ValidationResult;
    try {
      result = validator.validate(value);
    } catch (e) {
      return `the value could not be checked against the schema (${e instanceof Error ? e.message : String(e)})`;
    }
    if (result.valid) return null;
    return result.errors
      .slice(0, 5)
      .map((e) => `${e.instanceLocation}: ${e.error}`)
      .join('; ');
  };
}
