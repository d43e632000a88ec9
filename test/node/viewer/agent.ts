/**
 * The agent of the viewer tests, as a user's `--agent` module: its default export gives the
 * agent and request of a run in a FileStore directory. What the scripted model does depends on
 * the run id's prefix: `finished` (two lookups and an answer, with reasoning, usage and a
 * `<script>` in its text), `approve` (a `send` that needs approval, then an answer), `held`
 * (eight lookups and an answer; its second model call waits for the test, see {@link hold}),
 * `never` (a `send` whose replay policy is `never`, no approval), `big` (one lookup returning
 * 5 MB), `long` (50,000 quick steps), `several` (native tool calls, three at once: two `send`s that
 * each need approval and a lookup — of `Big` for a run id ending `-big` —, in one step, then an answer),
 * `family` (a parent whose `research` tool runs a sub-agent whose `note` needs approval: the family of
 * test/node/subagents/family.ts, both runs on the same FileStore).
 */
import { defineAgent, silentSink, STANDARD_SYNTHETIC_OBSERVATIONS, ToolRegistry } from '../../../src/core/index.ts';
import type { ModelCall, ModelReply, RunRequest, RunStore, ToolSpec } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { nativeToolInterpreter } from '../../../src/adapters/tool-interpreter.ts';
import { jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { family } from '../subagents/family.ts';

/** What the world saw: every email `send` sent, per run. */
export const SENT: { runId: string; to: string }[] = [];

/** A held run, seen from the test: `reached` once its step #0 is in the log and its next model call waits. */
export type Hold = { readonly reached: Promise<void>; release(): void };

const HOLDS = new Map<string, { readonly arrive: () => void; readonly released: Promise<void> }>();

/**
 * Hold the `held-…` run `runId` at a point the test controls: its second model call waits (the
 * run is live, its lock held, step #0 written) until `release()`. No timer decides what the test sees.
 */
export function hold(runId: string): Hold {
  let arrive = (): void => undefined;
  let release = (): void => undefined;
  const reached = new Promise<void>((ok) => (arrive = ok));
  const released = new Promise<void>((ok) => (release = ok));
  HOLDS.set(runId, { arrive, released });
  return { reached, release };
}

const specs = (runId: string): ToolSpec[] => [
  {
    name: 'lookup',
    description: 'Look a city up.',
    replayPolicy: 'safe',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    handler: async ({ city }) =>
      String(city) === 'Big' ? 'x'.repeat(5 * 1024 * 1024) : `${String(city)}: 21°C <b>sunny</b>`,
  },
  {
    name: 'send',
    description: 'Send an email.',
    replayPolicy: 'never',
    needsApproval: true,
    parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
    handler: async ({ to }) => (SENT.push({ runId, to: String(to) }), 'sent'),
  },
  {
    name: 'fire',
    description: 'Fire and forget.',
    replayPolicy: 'never',
    parameters: { type: 'object', properties: {} },
    handler: async () => 'fired',
  },
];

const usage = { inputTokens: 100, outputTokens: 20 };
const say = (callSeq: number, body: unknown, extra: Partial<ModelReply> = {}): ModelReply => ({
  callId: `c-${callSeq}`,
  text: JSON.stringify(body),
  reasoning: null,
  finishReason: 'stop',
  usage,
  ...extra,
});

function script(runId: string): (call: ModelCall) => ModelReply | Promise<ModelReply> {
  const kind = runId.split('-')[0];
  return async (call) => {
    const n = call.callSeq;
    switch (kind) {
      case 'finished':
        if (n < 2)
          return say(
            n,
            { tool: 'lookup', args: { city: n === 0 ? 'Oslo' : 'Lima' } },
            { reasoning: 'I should look both cities up first.' },
          );
        return say(n, {
          final: 'Lima is warmer. <script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">',
        });
      case 'approve':
        return n === 0 ? say(n, { tool: 'send', args: { to: 'ana@example.com' } }) : say(n, { final: 'Sent.' });
      case 'held': {
        const held = n === 1 ? HOLDS.get(runId) : undefined;
        held?.arrive();
        await held?.released;
        return n < 8 ? say(n, { tool: 'lookup', args: { city: `City ${n}` } }) : say(n, { final: 'done' });
      }
      case 'never':
        return n === 0 ? say(n, { tool: 'fire', args: {} }) : say(n, { final: 'fired once' });
      case 'several':
        if (n > 0) return { callId: `c-${n}`, text: 'Both sent.', reasoning: null };
        return {
          callId: 'c-0',
          text: '',
          reasoning: null,
          toolCalls: [
            { id: 't1', name: 'send', arguments: { to: 'ana@example.com' } },
            { id: 't2', name: 'send', arguments: { to: 'bo@example.com' } },
            { id: 't3', name: 'lookup', arguments: { city: runId.endsWith('-big') ? 'Big' : 'Oslo' } },
          ],
        };
      case 'big':
        return n === 0 ? say(n, { tool: 'lookup', args: { city: 'Big' } }) : say(n, { final: 'big done' });
      default:
        return n < 49_999
          ? { callId: null, text: JSON.stringify({ tool: 'lookup', args: { city: 'C' } }), reasoning: null }
          : { callId: null, text: '{"final":"long done"}', reasoning: null };
    }
  };
}

/** The agent and request of `runId` over `store` (default: a FileStore on `dir`). */
export function build(runId: string, store: RunStore): { agent: ReturnType<typeof defineAgent>; request: RunRequest } {
  if (runId.startsWith('family')) {
    // The parent's defaults fill the request in, as run and resume do with a partial one.
    const request = { runId, goal: 'find it' } as unknown as RunRequest;
    return { agent: family({ store }).parent, request };
  }
  const sent = ToolRegistry.of(specs(runId));
  const several = runId.startsWith('several');
  const agent = defineAgent({
    model: scriptedModel(script(runId)),
    interpreter: several ? nativeToolInterpreter('viewer-test') : jsonActionInterpreter(),
    store,
    events: silentSink(),
    syntheticObservations: STANDARD_SYNTHETIC_OBSERVATIONS,
  });
  const request: RunRequest = {
    runId,
    tools: sent,
    executor: sent.executor(),
    toolRenderStyle: 'none',
    cancelGraceMs: 2_000,
    budget: { maxSteps: 60_000, maxValidActions: 60_000, maxContextChars: 1_000_000_000 },
    context: { run: [], goal: [{ role: 'user', content: [{ type: 'text', text: 'Which city is warmer?' }] }] },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: '{observation}',
    ...(several ? { parallelToolCalls: 3 } : {}),
  };
  return { agent, request };
}

/** The `--agent` module's default export. */
export default function agentFor({
  runId,
  dir,
}: {
  readonly runId: string;
  readonly dir: string;
}): ReturnType<typeof build> {
  return build(runId, new FileStore({ dir }));
}
