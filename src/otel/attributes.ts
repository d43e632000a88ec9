/**
 * The attribute names and values the sink writes: the OpenTelemetry GenAI semantic conventions'
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/), copied as strings so that nothing of
 * `@opentelemetry/semantic-conventions` is loaded at run time, and PolyLoop's own under `polyloop.`
 * (docs/decisions/0079-otel-sink.md).
 * @module
 */

/** `gen_ai.operation.name`: `invoke_agent`, `chat` or `execute_tool`. */
export const OPERATION = 'gen_ai.operation.name';
/** The run's id: every span of a run, whichever driver opened it, carries it. */
export const CONVERSATION_ID = 'gen_ai.conversation.id';
export const REQUEST_MODEL = 'gen_ai.request.model';
export const RESPONSE_ID = 'gen_ai.response.id';
export const INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const CACHE_READ_TOKENS = 'gen_ai.usage.cache_read.input_tokens';
export const REASONING_TOKENS = 'gen_ai.usage.reasoning.output_tokens';
export const RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const TOOL_NAME = 'gen_ai.tool.name';
export const TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const ERROR_TYPE = 'error.type';

/** Content: recorded only with `captureContent: true`, each a JSON string. */
export const INPUT_MESSAGES = 'gen_ai.input.messages';
export const OUTPUT_MESSAGES = 'gen_ai.output.messages';
export const TOOL_ARGUMENTS = 'gen_ai.tool.call.arguments';
export const TOOL_RESULT = 'gen_ai.tool.call.result';

/** This driver carries on a run an earlier driver started. */
export const RUN_RESUMED = 'polyloop.run.resumed';
/** The first step this driver takes on (its `run_started.fromStep`). */
export const RUN_FROM_STEP = 'polyloop.run.from_step';
/** How a resumed run's interrupted step goes on (`readRunLog`'s resolution); absent at a boundary. */
export const RUN_RESOLUTION = 'polyloop.run.resolution';
/** Why the run ended, when it ended under this driver. */
export const RUN_STOP_REASON = 'polyloop.run.stop_reason';
/** The kind of request the run waits on, when this driver left it waiting for a person. */
export const RUN_PENDING_INPUT = 'polyloop.run.pending_input';
export const RUN_STEPS = 'polyloop.run.steps';
export const STEP_INDEX = 'polyloop.step.index';
export const REPLAY_POLICY = 'polyloop.replay_policy';
export const REPLAYED = 'polyloop.replayed';
export const ACTION_STATUS = 'polyloop.action.status';
/** The sub-agent's run an action started (`execute_tool` of an `agentTool`). */
export const CHILD_RUN_ID = 'polyloop.child_run.id';
/** A span its driver left open when it stopped (a crash, a lost lease) and a later driver closed. */
export const INTERRUPTED = 'polyloop.interrupted';
/** On an `execute_tool` span: the kind of request its sub-agent waits on, when it paused for a person. */
export const PENDING_INPUT = 'polyloop.action.pending_input';
