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
import { InvalidRequestError, PolyLoopError } from '../core/index.ts';
import { checkOptionKeys } from '../core/internal-entry.ts';
import type { JsonObject, ReplayPolicy, ToolSpec } from '../core/index.ts';
import type { OptionKeys } from '../core/internal-entry.ts';

/** The arguments passed the registry's check but not zod's own parse (an async refinement). Code `tool_arguments`. */
export class ToolArgumentsError extends PolyLoopError {
  override readonly name = 'ToolArgumentsError';
  /** The tool whose arguments failed. */
  readonly tool: string;
  constructor(tool: string, message: string, options?: { cause?: unknown }) {
    super('tool_arguments', `arguments of ${JSON.stringify(tool)} are invalid: ${message}`, options);
    this.tool = tool;
  }
}

/** What {@link defineTool} takes: every field of a plain {@link ToolSpec}, with `schema` in place of `parameters`. */
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
  /** Default false. True: a person approves each call before it runs (see docs/human-input.md). */
  readonly needsApproval?: boolean;
  /** `'human'`: a person answers each call; the tool has no handler (see docs/human-input.md). */
  readonly answeredBy?: 'human';
};

/** Every option of {@link defineTool}; the compiler keeps it complete. */
const KNOWN: OptionKeys<ZodToolDefinition<z.$ZodObject>> = {
  name: true,
  description: true,
  schema: true,
  replayPolicy: true,
  completesRun: true,
  handler: true,
  needsApproval: true,
  answeredBy: true,
};

/** The plain spec's fields a zod definition passes through as they are (the registry checks their kinds). */
const PASSED_THROUGH = ['replayPolicy', 'completesRun', 'needsApproval', 'answeredBy'] as const;

/** The tool's parameters: zod's input-side JSON Schema, as plain JSON, without `$schema` (always 2020-12 here). */
function parametersOf(name: string, schema: z.$ZodObject): JsonObject {
  let generated: unknown;
  try {
    generated = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' });
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    const message = `defineTool(${JSON.stringify(name)}): the schema has no JSON Schema form: ${detail}`;
    throw new InvalidRequestError(message, { cause: e });
  }
  const { $schema: _draft, ...rest } = JSON.parse(JSON.stringify(generated)) as Record<string, unknown>;
  return rest as JsonObject;
}

/** Refuses what is not a zod tool definition before zod sees it: unknown keys, a schema that is not a zod object. */
function checkDefinition(def: unknown): void {
  const name = (def as { name?: unknown } | null)?.name;
  const where = typeof name === 'string' ? `defineTool(${JSON.stringify(name)})` : 'defineTool';
  checkOptionKeys(def, KNOWN, where, {
    hints: { parameters: 'give a zod object as `schema` (polyloop/zod makes the JSON Schema `parameters` from it)' },
  });
  const schema = (def as { schema?: unknown }).schema;
  const zod = (schema as { _zod?: { def?: { type?: unknown } } } | null | undefined)?._zod;
  if (zod?.def?.type !== 'object') {
    throw new InvalidRequestError(`${where}: schema must be a zod object (\`z.object({ … })\`)`);
  }
}

/**
 * Define a tool with a zod schema. Returns a plain {@link ToolSpec} for `ToolRegistry.of`, with
 * every field of the definition but `schema` passed through: `schema` becomes `parameters` (its
 * JSON Schema, for the model) and `argumentsSchema` (the registry validates arguments with zod
 * itself, through Standard Schema, so a registry of zod tools loads no JSON Schema validator
 * unless a schema has a `.regex()`, which is matched in linear time first).
 * Throws `InvalidRequestError` at once for an option it does not know (naming the nearest one),
 * a schema that is not a zod object, or one with no JSON Schema form (e.g. `z.date()`).
 * Arguments zod refuses, refinements included, are refused by the registry (`not_executed`) before
 * the handler runs. A handler whose arguments fail zod's parse all the same (an async refinement,
 * which the registry's synchronous check cannot wait for) throws {@link ToolArgumentsError}, which
 * the executor reports as an observation.
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
  checkDefinition(def);
  const parameters = parametersOf(def.name, def.schema);
  // The zod schema is the tool's own validator: the registry checks arguments with it, and needs
  // the JSON Schema validator only for a pattern (docs/decisions/0081-tools-with-their-own-validator.md).
  const spec: Record<string, unknown> = {
    name: def.name,
    description: def.description,
    parameters,
    argumentsSchema: def.schema,
  };
  for (const key of PASSED_THROUGH) if (def[key] !== undefined) spec[key] = def[key];
  return withHandler(spec as ToolSpec, def);
}

/** The spec with a handler that parses its arguments with zod first, when the definition has one. */
function withHandler<S extends z.$ZodObject>(spec: ToolSpec, def: ZodToolDefinition<S>): ToolSpec {
  const handler = def.handler;
  if (handler === undefined) return spec;
  return {
    ...spec,
    handler: async (args, ctx) => {
      const parsed = await z.safeParseAsync(def.schema, args);
      if (!parsed.success) {
        throw new ToolArgumentsError(def.name, z.prettifyError(parsed.error), { cause: parsed.error });
      }
      return handler(parsed.data as z.output<S>, ctx);
    },
  };
}
