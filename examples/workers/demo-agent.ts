/**
 * The demo agent served by `npm run dev` (and used by the workerd tests): a small local policy
 * model that reverses each word of the goal with a tool, one word per step, then answers with
 * what the tool observed. Deterministic, offline, no API key.
 * @module
 */
import * as z from 'zod/mini';
import { jsonActionInterpreter, ToolRegistry } from '../../src/core/index.ts';
import type { Message, ModelCall, ModelCaller, ModelReply, ToolSpec } from '../../src/core/index.ts';
import { sleep } from '../../src/testing/scripted-model.ts';
import type { RunSetup, RunSetupContext } from '../../src/platform-workers/index.ts';

const MAX_WORDS = 12;
const OBSERVATION = 'Observation: ';

/**
 * `input` of `POST /runs` for the demo: a goal string, or `{ goal, pauseMs, approve }` — `pauseMs`
 * slows every model call and tool call down, `approve: true` makes each reverse_word call wait
 * for a person's approval (`POST /runs/:id/input`).
 */
const Goal = z.string().check(z.trim(), z.minLength(1), z.maxLength(2000));
const DemoInput = z.union([
  Goal,
  z.strictObject({
    goal: Goal,
    pauseMs: z.optional(z.int().check(z.minimum(0), z.maximum(10_000))),
    approve: z.optional(z.boolean()),
  }),
]);

function textOf(messages: readonly Message[], role: Message['role']): string[] {
  return messages
    .filter((m) => m.role === role)
    .map((m) => m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
}

/** The policy: reverse the goal's words one by one, then answer with the observations joined. */
function demoModel(): ModelCaller {
  return {
    params: Object.freeze({ model: 'polyloop-demo-policy', version: 1 }),
    async call(call: ModelCall): Promise<ModelReply> {
      const pauseMs = Number(call.binding['pauseMs'] ?? '0');
      if (pauseMs > 0) await sleep(pauseMs, call.signal);
      call.signal.throwIfAborted();
      const users = textOf(call.messages, 'user');
      const words = (users[0] ?? '').split(/\s+/).filter(Boolean).slice(0, MAX_WORDS);
      const observed = users.filter((t) => t.startsWith(OBSERVATION)).map((t) => t.slice(OBSERVATION.length));
      const next = words[observed.length];
      const text =
        next === undefined
          ? JSON.stringify({ final: observed.join(' ') })
          : JSON.stringify({ tool: 'reverse_word', args: { word: next } });
      return { callId: `demo-${call.callSeq}`, text, reasoning: null };
    },
  };
}

/** The demo's one tool, reverse_word (each call slowed by `pauseMs`, approved first with `approve`). */
export function demoToolSpecs(pauseMs: number, approve: boolean): ToolSpec[] {
  return [
    {
      name: 'reverse_word',
      description: 'Reverse the characters of one word.',
      parameters: {
        type: 'object',
        properties: { word: { type: 'string', minLength: 1 } },
        required: ['word'],
        additionalProperties: false,
      },
      replayPolicy: 'safe',
      needsApproval: approve,
      handler: async (args, { signal }) => {
        if (pauseMs > 0) await sleep(pauseMs, signal);
        return [...String(args['word'])].reverse().join('');
      },
    },
  ];
}

/**
 * The demo's run factory: validates `input` (a goal string, or `{ goal, pauseMs, approve }`), then builds
 * the agent — its seams and `defaults`, the tool and settings every run shares — and the run's own
 * fields: its goal and pause. A rejected input throws, which the app answers with 400. On a resume
 * the same input builds the agent again; the run's own fields are read back from its log.
 */
export function demoSetup(ctx: Omit<RunSetupContext<unknown>, 'childStore'>): RunSetup {
  const parsed = DemoInput.safeParse(ctx.input);
  if (!parsed.success)
    throw new Error(
      'the demo agent takes a goal string, or { "goal": string, "pauseMs"?: integer 0-10000, "approve"?: boolean }',
    );
  const { goal, pauseMs, approve } =
    typeof parsed.data === 'string'
      ? { goal: parsed.data, pauseMs: 0, approve: false }
      : { goal: parsed.data.goal, pauseMs: parsed.data.pauseMs ?? 0, approve: parsed.data.approve ?? false };
  const tools = ToolRegistry.of(demoToolSpecs(pauseMs, approve));
  return {
    model: demoModel(),
    interpreter: jsonActionInterpreter(),
    syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The environment failed.' },
    defaults: {
      tools,
      executor: tools.executor(),
      budget: { maxSteps: MAX_WORDS + 2, maxValidActions: MAX_WORDS + 1, maxContextChars: 200_000 },
      context: {
        run: [
          {
            role: 'system',
            content: [
              {
                type: 'text',
                text: 'Reverse every word of the goal with reverse_word, one call per step, then give the final answer. Reply with JSON.',
              },
            ],
          },
        ],
      },
      injections: {},
      modelReplayPolicy: 'safe',
      observationTemplate: `${OBSERVATION}{observation}`,
      toolRenderStyle: 'json',
      cancelGraceMs: 5_000,
    },
    request: { goal, modelBinding: { pauseMs: String(pauseMs) } },
  };
}
