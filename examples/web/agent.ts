/**
 * The demo agent of the web example: a deterministic local policy (no network, no API key) that
 * looks up the weather of five cities with a tool that takes visible time, then — when the page
 * gives it an outbox — asks the person who should get the report (`ask_user`, answered by the
 * person) and emails it (`send_email`, which the person approves first), and answers which city is
 * warmest. Its replies are a pure function of the messages and tools it is shown, so a resumed
 * run that rebuilds the same history gets the same replies.
 *
 * A second goal, `pair`, shows several tool calls in one reply: the agent emails the report to
 * two people at once, each email waits for its own approval, and nothing is sent until both are
 * answered (in any order).
 */
import { defineAgent, jsonActionInterpreter, ToolRegistry } from '../../src/core/index.ts';
import type {
  AgentDefinition,
  DecisionInterpreter,
  EventSink,
  JsonValue,
  ModelCall,
  RunRequest,
  RunStore,
  ToolSpec,
} from '../../src/core/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { sleep } from '../../src/testing/scripted-model.ts';

/** The cities the agent visits, in order. */
export const CITIES = ['Oslo', 'Lisbon', 'Cairo', 'Reykjavik', 'Singapore'] as const;

const TEMPERATURES: Readonly<Record<string, number>> = { Oslo: 4, Lisbon: 19, Cairo: 31, Reykjavik: 2, Singapore: 29 };

/** A made-up but stable temperature per city (no network). */
export function temperatureOf(city: string): number {
  return TEMPERATURES[city] ?? 15;
}

const OBSERVATION = /^Observation:\n([\s\S]*)$/;
const WEATHER = /^(.+): (-?\d+)°C$/;

/** The question `ask_user` puts to the person. */
export const QUESTION = 'Who should get the weather report? (an email address)';

/** Every observation the model was shown, in order. */
function observations(call: ModelCall): string[] {
  const seen: string[] = [];
  for (const m of call.messages) {
    if (m.role !== 'user') continue;
    for (const block of m.content) {
      const hit = block.type === 'text' ? OBSERVATION.exec(block.text) : null;
      if (hit) seen.push(hit[1] as string);
    }
  }
  return seen;
}

/**
 * The policy: the next unvisited city; then, if it has the report tools, ask whom to send the
 * report to and send it; then the final answer.
 */
export function policy(call: ModelCall): string {
  const seen = observations(call);
  const next = CITIES[seen.length];
  if (next !== undefined) return JSON.stringify({ tool: 'weather', args: { city: next } });
  const temps = seen
    .slice(0, CITIES.length)
    .map((o) => WEATHER.exec(o))
    .map((m) => ({ city: m?.[1] ?? '?', temp: Number(m?.[2]) }));
  const best = temps.reduce((a, b) => (b.temp > a.temp ? b : a));
  const answer = `${best.city} is the warmest at ${best.temp}°C`;
  if (!call.tools.some((t) => t.name === 'send_email')) return JSON.stringify({ final: answer });
  const [to, sent] = seen.slice(CITIES.length);
  if (to === undefined) return JSON.stringify({ tool: 'ask_user', args: { question: QUESTION } });
  if (sent === undefined)
    return JSON.stringify({
      tool: 'send_email',
      args: { to: to.trim(), subject: 'The warmest city', body: `${answer}.` },
    });
  return JSON.stringify({
    final: sent.startsWith('Sent to ')
      ? `${answer}; the report went to ${to.trim()}.`
      : `${answer}; the report was not sent (${sent}).`,
  });
}

/** Which demo runs: the weather tour (default), or two emails in one reply (`pair`). */
export type Goal = 'weather' | 'pair';

/** The two people the `pair` goal emails, in call order. */
export const PAIR = ['ana@example.com', 'bo@example.com'] as const;

const PAIR_GOAL = `Email the weather report to ${PAIR.join(' and ')}.`;

/**
 * The `pair` policy: both emails in one reply, then an answer that repeats what each call
 * observed (several calls' observations come back in one message, in call order).
 */
export function pairPolicy(call: ModelCall): string {
  const seen = call.messages
    .filter((m) => m.role === 'user')
    .flatMap((m) => m.content)
    .map((b) => (b.type === 'text' ? b.text : ''))
    .filter((t) => t.startsWith('Observation:'));
  if (seen.length > 0) return JSON.stringify({ final: `Done. ${seen.join(' ').replaceAll('Observation:\n', '')}` });
  const email = (to: string) => ({ tool: 'send_email', args: { to, subject: 'The weather', body: 'Cairo: 31°C.' } });
  return JSON.stringify({ tools: PAIR.map(email) });
}

/**
 * The JSON protocol plus `{"tools": [{"tool", "args"}, …]}`: several calls in one reply, read as
 * one `actions` decision (the run takes them when its `parallelToolCalls` is above 1).
 */
function severalCallsInterpreter(): DecisionInterpreter {
  const single = jsonActionInterpreter();
  return {
    params: Object.freeze({ interpreter: 'json-actions', version: 1 }),
    interpret(reply, ctx) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(reply.text);
      } catch {
        return single.interpret(reply, ctx);
      }
      const tools = (parsed as { tools?: unknown } | null)?.tools;
      if (!Array.isArray(tools) || tools.length < 2) return single.interpret(reply, ctx);
      const calls = (tools as { tool: string; args: JsonValue }[]).map((t) => ({
        action: { kind: 'tool_call', name: String(t.tool), arguments: t.args ?? {} } as const,
        trajectoryRepr: `${t.tool}(${JSON.stringify(t.args ?? {})})`,
      }));
      return { kind: 'actions', calls, historyText: reply.text };
    },
  };
}

/** How long things take, in milliseconds (visible in the page; 0 for quick runs). */
export type Pace = { readonly thinkMs: number; readonly toolMs: number };

/** The demo agent over a store and an event sink. */
export function demoAgent(store: RunStore, events: EventSink, pace: Pace, goal: Goal = 'weather'): AgentDefinition {
  const pair = goal === 'pair';
  return defineAgent({
    model: scriptedModel(pair ? pairPolicy : policy, {
      model: pair ? 'local-pair-policy' : 'local-weather-policy',
      delayMs: pace.thinkMs,
    }),
    interpreter: pair ? severalCallsInterpreter() : jsonActionInterpreter(),
    store,
    events,
    syntheticObservations: { notExecuted: 'The action was not executed.', envError: 'The weather service failed.' },
  });
}

/** An email the agent sends (once the person approved it). */
export type Email = { readonly to: string; readonly subject: string; readonly body: string };

/** The world the demo's tools act on. */
export type DemoWorld = {
  /** Told each time the weather tool really runs (to show who drives). */
  readonly onLookup?: (city: string) => void;
  /**
   * Delivers an email (the page's outbox). Given, the agent also gets `ask_user` and
   * `send_email` and mails its answer; absent, it only answers.
   */
  readonly sendEmail?: (email: Email) => void | Promise<void>;
};

/** The two tools that involve the person: one they answer, one they approve. */
function reportTools(sendEmail: NonNullable<DemoWorld['sendEmail']>): ToolSpec[] {
  const text = { type: 'string' } as const;
  return [
    {
      name: 'ask_user',
      description: 'Ask the person a question; their answer is the observation.',
      parameters: {
        type: 'object',
        properties: { question: text },
        required: ['question'],
        additionalProperties: false,
      },
      answeredBy: 'human',
    },
    {
      name: 'send_email',
      description: 'Send an email. The person approves each one before it goes.',
      parameters: {
        type: 'object',
        properties: { to: text, subject: text, body: text },
        required: ['to', 'subject', 'body'],
        additionalProperties: false,
      },
      replayPolicy: 'never', // an email must not go twice: after a crash mid-send, the person settles it
      needsApproval: true,
      handler: async (args) => {
        const email = { to: String(args['to']), subject: String(args['subject']), body: String(args['body']) };
        await sendEmail(email);
        return `Sent to ${email.to}.`;
      },
    },
  ];
}

/** The demo request over `world` (see {@link DemoWorld}); `pair` needs `world.sendEmail`. */
export function demoRequest(runId: string, pace: Pace, world: DemoWorld = {}, goal: Goal = 'weather'): RunRequest {
  const tools = ToolRegistry.of([
    {
      name: 'weather',
      description: 'Current temperature of a city, in °C.',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      },
      replayPolicy: 'safe', // a lookup: running it again after a reload is harmless
      handler: async (args, { signal }) => {
        const city = String((args as { city?: unknown }).city);
        world.onLookup?.(city);
        await sleep(pace.toolMs, signal);
        return `${city}: ${temperatureOf(city)}°C`;
      },
    },
    ...(world.sendEmail ? reportTools(world.sendEmail) : []),
  ]);
  const question = goal === 'pair' ? PAIR_GOAL : `Which of ${CITIES.join(', ')} is warmest right now?`;
  return {
    runId,
    budget: { maxSteps: 12, maxValidActions: 10, maxContextChars: 20_000 },
    executor: tools.executor(),
    tools,
    context: {
      run: [
        {
          role: 'system',
          content: [{ type: 'text', text: 'You are a careful weather agent. Reply with JSON actions.' }],
        },
      ],
      goal: [{ role: 'user', content: [{ type: 'text', text: question }] }],
    },
    injections: {},
    modelBinding: {},
    modelReplayPolicy: 'safe',
    observationTemplate: 'Observation:\n{observation}',
    toolRenderStyle: 'markdown',
    cancelGraceMs: 1000,
    ...(goal === 'pair' ? { parallelToolCalls: 2 } : {}),
  };
}
