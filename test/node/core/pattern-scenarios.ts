/**
 * What `pattern-freeze.test.ts` runs inside a worker thread, bundled by esbuild: each scenario
 * meets a catastrophic-backtracking pattern with a model-chosen string, through one road (the
 * registry, `polyloop/zod`, `polyloop/mcp`, a whole run, a cancelled run). With a backtracking
 * matcher the thread never answers and the test ends it; it must answer at once.
 */
import { parentPort } from 'node:worker_threads';
import { z } from 'zod';
import { InMemoryStore, readRunLog, run, ToolRegistry } from '../../../src/core/index.ts';
import type { ActionOutcome, JsonObject } from '../../../src/core/index.ts';
import { mcpTools } from '../../../src/mcp/index.ts';
import { scriptedModel } from '../../../src/testing/index.ts';
import { defineTool } from '../../../src/zod/index.ts';
import { call, final, mcpAgent } from '../../fixtures/mcp/agent.ts';
import { ADVERSARIAL, ADVERSARIAL_LONG, patternRegistry, patternVerdicts } from '../../fixtures/pattern-cases.ts';

const ctx = { runId: 'r', stepIndex: 0, resultId: 's0.action', signal: new AbortController().signal };
const REDOS = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } }, required: ['s'] } as const;

// Scenarios check a registry on the line after `of`, as the vitest setup lets every test do
// (test/support/json-schema-loaded.ts): the JSON Schema validator is loaded first, once.
await ToolRegistry.of([
  { name: 'probe', description: 'Loads the validator.', parameters: { type: 'object' } },
]).loaded();

/** The outcome of calling `name` with `args` through the registry's executor. */
const execute = (tools: ToolRegistry, name: string, args: JsonObject): Promise<ActionOutcome> =>
  tools.executor().execute({ kind: 'tool_call', name, arguments: args }, ctx);

const scenarios: Record<string, (input: string) => Promise<unknown>> = {
  registry: async () => {
    const tools = ToolRegistry.of([
      { name: 'echo', description: 'Echoes', parameters: REDOS, handler: async () => 'ran' },
    ]);
    return [await execute(tools, 'echo', { s: ADVERSARIAL }), await execute(tools, 'echo', { s: ADVERSARIAL_LONG })];
  },
  verdicts: async () => patternVerdicts(patternRegistry()),
  zod: async () => {
    const spec = defineTool({
      name: 'echo',
      description: 'Echoes',
      schema: z.object({ s: z.string().regex(/^(a+)+$/) }),
      handler: async () => 'ran',
    });
    return execute(ToolRegistry.of([spec]), 'echo', { s: ADVERSARIAL });
  },
  mcp: async (url) => execute(await mcpTools({ url }), 'echo', { s: ADVERSARIAL }),
  // The server's output schema and its structured content: both chosen by the server.
  mcpOutput: async (url) => execute(await mcpTools({ url }), 'report', {}),
  run: async () => {
    const tools = ToolRegistry.of([
      { name: 'echo', description: 'Echoes', parameters: REDOS, handler: async () => 'ran' },
    ]);
    const { agent, request } = mcpAgent('redos-run', tools, [call('echo', { s: ADVERSARIAL }), final('gave up')]);
    const result = await run(agent, request);
    const first = result.trajectory[0];
    return { stopReason: result.stopReason, status: first?.actionStatus, observation: first?.observation };
  },
  cancel: async () => {
    const tools = ToolRegistry.of([
      { name: 'echo', description: 'Echoes', parameters: REDOS, handler: async () => 'ran' },
    ]);
    const controller = new AbortController();
    const store = new InMemoryStore();
    const { agent, request } = mcpAgent('redos-cancel', tools, [], store);
    // The model keeps sending the argument; the caller cancels once the model has been asked twice.
    const model = scriptedModel(({ callSeq }) => {
      if (callSeq === 2) controller.abort(new Error('cancelled by the test'));
      return call('echo', { s: ADVERSARIAL_LONG });
    });
    const rejected = await run({ ...agent, model }, request, { signal: controller.signal }).then(
      () => 'resolved',
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    const log = readRunLog(await store.readLog('redos-cancel'));
    return { rejected, stopReason: log.ended?.stopReason ?? null, steps: log.steps };
  },
};

parentPort?.on('message', async ({ name, input }: { name: string; input: string }) => {
  try {
    parentPort?.postMessage({ ok: true, value: JSON.parse(JSON.stringify((await scenarios[name]?.(input)) ?? null)) });
  } catch (e) {
    parentPort?.postMessage({ ok: false, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
  }
});
