/**
 * The definition and request types (docs/api.md). Their checks are in `request-checks.ts`, the
 * identity snapshot in `snapshot.ts`.
 * @module
 */
import type { ActionExecutor, DecisionInterpreter, EventSink, ModelCaller, RunStore } from './ports.ts';
import type { ToolRegistry } from './tools.ts';
import type { Budget, InputReply, Message, ReplayPolicy, SeamParams, SkillEntry, ToolRenderStyle } from './types.ts';

/** The text history shows in place of an observation the model must not depend on. */
export type SyntheticObservations = {
  /** For an action that was not executed (unknown tool, bad arguments, wrong action kind). */
  readonly notExecuted: string;
  /** For an action whose environment failed. */
  readonly envError: string;
};

/**
 * What {@link defineAgent} takes. Every field but `defaults` is required; there is no default
 * store.
 */
export type AgentConfig = {
  readonly model: ModelCaller;
  readonly interpreter: DecisionInterpreter;
  readonly store: RunStore;
  readonly events: EventSink;
  readonly syntheticObservations: SyntheticObservations;
  /**
   * Request fields every run of this agent would repeat, given once: a request fills what it
   * leaves out from here (the request wins where both give a field). They count in a run's
   * identity like the fields they fill. See docs/upgrades.md.
   */
  readonly defaults?: AgentDefaults;
};

/** What an agent's `defaults` may hold: any request field but `runId`. */
export type AgentDefaults = Partial<Omit<RunRequestInput, 'runId'>>;

/** `agent.params`: every seam's params plus the synthetic texts. */
export type AgentParams = {
  readonly model: SeamParams;
  readonly interpreter: SeamParams;
  readonly events: SeamParams;
  readonly syntheticObservations: SyntheticObservations;
};

/** A frozen, reusable agent definition. */
export type AgentDefinition = AgentConfig & { readonly params: AgentParams };

/**
 * One run's request. Every field but `parallelToolCalls` and `historyWindow` is required and has no
 * default. Cheap to build: no I/O, no hashing.
 */
export type RunRequest = {
  readonly runId: string;
  readonly budget: Budget;
  readonly executor: ActionExecutor;
  readonly tools: ToolRegistry;
  readonly context: { readonly run: readonly Message[]; readonly goal: readonly Message[] };
  readonly injections: Readonly<Record<string, readonly SkillEntry[]>>;
  readonly modelBinding: Readonly<Record<string, string>>;
  readonly modelReplayPolicy: ReplayPolicy;
  readonly observationTemplate: string;
  readonly toolRenderStyle: ToolRenderStyle;
  readonly cancelGraceMs: number;
  /**
   * The most calls of one model reply a step runs at once (docs/design/step.md#several-calls-a-step).
   * Default 1: one call a turn, and a reply with several is invalid. Above 1, a step runs every call of
   * the reply, this many at a time. In the run's identity when above 1.
   */
  readonly parallelToolCalls?: number;
  /**
   * Keep a long run's prompt and memory bounded (docs/design/conversation.md#the-history-window):
   * each model call is handed the prefix (run context, tools, injections, goal) and the turns of the
   * last `steps` completed steps only, and the run keeps only those steps in memory, so
   * `RunResult.trajectory` holds the last `steps` (the log keeps every step). Absent: every step's
   * turns, every step kept. In the run's identity when given.
   */
  readonly historyWindow?: { readonly steps: number };
};

/**
 * A request as `run` and `resume` take it: `runId` and whatever the agent's defaults do not
 * already give. `goal` is the short form of `context.goal` (a string is one user text message);
 * `context.run` falls back to the defaults', then to no messages.
 */
export type RunRequestInput = Partial<Omit<RunRequest, 'runId' | 'context'>> & {
  readonly runId: string;
  readonly goal?: string | readonly Message[];
  readonly context?: { readonly run?: readonly Message[]; readonly goal?: readonly Message[] };
};

/** Options of `run`. */
export type RunOptions = { readonly signal?: AbortSignal };

/**
 * Options of `resume`: `input` answers the run's open input request (docs/human-input.md);
 * `upgrade` lets a run whose identity changed go on under the new one, writing an `upgrade` record
 * with `reason` (docs/upgrades.md).
 */
export type ResumeOptions = RunOptions & { readonly input?: InputReply; readonly upgrade?: UpgradeOptions };

/** Why a run is upgraded: kept in its `upgrade` record, shown by the viewer and the CLI. */
export type UpgradeOptions = { readonly reason: string };
