/**
 * `polyloop/zod` — typed tools from zod schemas. The tool's JSON Schema comes from
 * `z.toJSONSchema(schema, { io: 'input' })` (the model writes the *input* side: fields with a
 * default are optional to it), and the handler receives the arguments parsed by zod, with their
 * inferred type. Core never imports zod; this module only produces a plain {@link ToolSpec}.
 * It imports `zod/v4/core` only, so schemas from `zod` and from `zod/mini` both work and a
 * `zod/mini` bundle does not pull in classic zod.
 * @module
 */
import * as z from 'zod/v4/core';
import type { JsonObject, ReplayPolicy, ToolSpec } from '../core/index.ts';

/** The arguments passed the JSON Schema check but not zod's own (a refinement, a transform). */
export class ToolArgumentsError extends Error {
  override readonly name = 'ToolArgumentsError';
  /** The tool whose arguments failed. */
  readonly tool: string;
  constructor(tool: string, message: string, options?: { cause?: unknown }) {
    super(`arguments of ${JSON.stringify(tool)} are invalid: ${message}`, options);
    this.tool = tool;
  }
}

/** What {@link defineTool} takes. */
export type ZodToolDefinition<S extends z.$ZodObject> = {
  readonly name: string;
  readonly description: string;
  /** A `z.object(...)` (from `zod` or `zod/mini`); its input JSON Schema becomes the tool's `parameters`. */
  readonly schema: S;
  /** Default `'never'`. */
  readonly replayPolicy?: ReplayPolicy;
  /** Default false. */
  readonly completesRun?: boolean;
  /** Receives zod-parsed arguments (`z.output<S>`), returns observation text. */
  readonly handler?: (args: z.output<S>, ctx: { readonly signal: AbortSignal }) => Promise<string>;
};

/** The tool's parameters: zod's input-side JSON Schema, as plain JSON, without `$schema` (always 2020-12 here). */
function parametersOf(name: string, schema: z.$ZodObject): JsonObject {
  let generated: unknown;
  try {
    generated = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' });
  } catch (e) {
    throw new TypeError(`defineTool(${JSON.stringify(name)}): the schema has no JSON Schema form: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  const { $schema: _draft, ...rest } = JSON.parse(JSON.stringify(generated)) as Record<string, unknown>;
  return rest as JsonObject;
}

/**
 * Define a tool with a zod schema. Returns a plain {@link ToolSpec} for `ToolRegistry.of`.
 * Throws `TypeError` at once when the schema has no JSON Schema form (e.g. `z.date()`).
 * A handler whose arguments fail zod's parse (after the registry's JSON Schema check passed:
 * refinements) throws {@link ToolArgumentsError}, which the executor reports as an observation.
 *
 * @example
 * const add = defineTool({
 *   name: 'add', description: 'Adds two numbers', replayPolicy: 'safe',
 *   schema: z.object({ a: z.number(), b: z.number() }),
 *   handler: async ({ a, b }) => String(a + b),
 * });
 * const tools = ToolRegistry.of([add]);
 */
export function defineTool<S extends z.$ZodObject>(def: ZodToolDefinition<S>): ToolSpec {
  const spec: ToolSpec = {
    name: def.name,
    description: def.description,
    parameters: parametersOf(def.name, def.schema),
    ...(def.replayPolicy === undefined ? {} : { replayPolicy: def.replayPolicy }),
    ...(def.completesRun === undefined ? {} : { completesRun: def.completesRun }),
  };
  const handler = def.handler;
  if (handler === undefined) return spec;
  return {
    ...spec,
    handler: async (args, ctx) => {
      const parsed = await z.safeParseAsync(def.schema, args);
      if (!parsed.success) throw new ToolArgumentsError(def.name, z.prettifyError(parsed.error), { cause: parsed.error });
      return handler(parsed.data as z.output<S>, ctx);
    },
  };
}
