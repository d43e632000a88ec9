/**
 * What the loop decides and does: seam parameters, run limits, tools and their registry view,
 * actions, an interpreter's decision and an executor's outcome. Imports only its sibling type
 * modules (docs/design/README.md#dependency-rules, rule 2).
 * @module
 */
import type { ContentBlock, JsonObject, JsonValue } from './messages.ts';

/** A seam's reported parameters: flat, JSON-scalar values only. */
export type SeamParams = Readonly<Record<string, string | number | boolean | null>>;

/** May an in-flight operation be issued again on resume? */
export type ReplayPolicy = 'safe' | 'never';

/** How the tool list is rendered into the prompt. */
export type ToolRenderStyle = 'none' | 'json' | 'markdown';

/** A skill entry injected into a channel. */
export type SkillEntry = { readonly name: string; readonly text: string };

/** Run limits; every field is a positive integer. `maxTotalTokens` is optional: absent means no limit. */
export type Budget = {
  readonly maxSteps: number;
  readonly maxValidActions: number;
  readonly maxContextChars: number;
  readonly maxTotalTokens?: number;
};

/** The tool schema handed to a model (`ToolRegistry.modelSchemas()`). */
export type ModelToolSchema = { readonly name: string; readonly description: string; readonly parameters: JsonObject };

/** A tool's description without its implementation (what a registry exposes to interpreters). */
export type ToolDescriptor = ModelToolSchema & {
  readonly replayPolicy: ReplayPolicy;
  readonly completesRun: boolean;
  /** A person approves each call before it runs. Default false. */
  readonly needsApproval: boolean;
  /** `'human'`: a person answers the call instead of a handler; null otherwise. */
  readonly answeredBy: 'human' | null;
};

/** Result of validating an action against a registry. */
export type ValidationResult = { readonly ok: true } | { readonly ok: false; readonly message: string };

/** What an action is: a call of a named tool, or source code for an environment to run. */
export type Action =
  | { readonly kind: 'tool_call'; readonly name: string; readonly arguments: JsonValue; readonly id?: string }
  | { readonly kind: 'code'; readonly source: string };

/** The read-only view of a tool registry that interpreters receive. `ToolRegistry` implements it. */
export interface ToolCatalog {
  names(): readonly string[];
  get(name: string): ToolDescriptor | undefined;
  validate(action: Action): ValidationResult;
  modelSchemas(): readonly ModelToolSchema[];
  /**
   * Resolves when every tool's arguments can be checked (a registry's JSON Schema validator loads
   * on demand: docs/decisions/0081-tools-with-their-own-validator.md). Optional: a catalog without
   * it is taken as ready. Contract: rejects with the error a tool that cannot be checked is refused
   * with; a run awaits it before its first `validate`, and its abort wins over the wait.
   */
  loaded?(): Promise<void>;
}

type DecisionHistory = { readonly historyText: string; readonly historyContent?: readonly ContentBlock[] };

/** One call of a reply that holds several (docs/design/step.md#several-calls-a-step). */
export type CallDecision = { readonly action: Action; readonly trajectoryRepr: string };

/**
 * An interpreter's reading of a reply: one action, several (`actions`, the calls of one reply in the
 * provider's order), a final answer, or an invalid reply.
 */
export type Decision =
  | ({ readonly kind: 'action'; readonly action: Action; readonly trajectoryRepr: string } & DecisionHistory)
  | ({ readonly kind: 'actions'; readonly calls: readonly CallDecision[] } & DecisionHistory)
  | ({ readonly kind: 'final'; readonly answer: string } & DecisionHistory)
  | ({ readonly kind: 'invalid'; readonly explanation: string } & DecisionHistory);

/** The action branch of {@link Decision}. */
export type ActionDecision = Extract<Decision, { kind: 'action' }>;

/** The several-calls branch of {@link Decision}. */
export type ActionsDecision = Extract<Decision, { kind: 'actions' }>;

/** How an action went. */
export type ActionStatus = 'executed' | 'not_executed' | 'env_error';

/** A step's action status: an executor's, or `denied` (a person refused the action; nothing ran). */
export type StepActionStatus = ActionStatus | 'denied';

/** What an executor reports about one action. */
export type ActionOutcome = {
  readonly status: ActionStatus;
  readonly observation: string;
  readonly observationIsSynthetic: boolean;
  readonly envReportedCompletion: boolean;
  readonly observationTruncatedChars: number;
};
