/**
 * How a turn's stream ends: the `finish` chunk's reason for each stop reason, its metadata, and
 * the failure text of a run that failed.
 * @module
 */
import type { EndReason, StepRecord, StopReason, StopRequest, Usage } from '../core/index.ts';

/** What the AI SDK's `finish` chunk says, for each way a turn stops. */
export type ChunkFinishReason = 'stop' | 'length' | 'error' | 'other' | 'tool-calls';

/**
 * How a turn's stream ends: its stop reason, tokens, the failure text of a failed run, and the
 * stop request that ended it (`requestStop`), if one did.
 */
export type TurnEnding = {
  readonly stopReason: StopReason;
  readonly usage: Usage;
  readonly error: string | null;
  readonly stopRequest?: StopRequest | undefined;
};

/** The metadata of a turn's assistant message (`finish.messageMetadata`); `stopRequest` when a stop ended it. */
export type TurnMetadata = {
  readonly runId: string;
  readonly stopReason: StopReason;
  readonly usage: Usage;
  readonly stopRequest?: StopRequest;
};

const FINISH: Readonly<Record<StopReason, ChunkFinishReason>> = {
  final_answer: 'stop',
  env_completed: 'stop',
  tool_completed: 'stop',
  max_steps: 'length',
  max_valid_actions: 'length',
  max_tokens: 'length',
  context_limit: 'length',
  model_error: 'error',
  interpreter_error: 'error',
  env_error: 'error',
  cancelled: 'other',
  in_flight_unknown: 'other',
  awaiting_input: 'tool-calls',
};

/** The `finish` reason of a stop reason. */
export function chunkFinishReason(stopReason: StopReason): ChunkFinishReason {
  return FINISH[stopReason] ?? 'other';
}

/** The failure text an ended run shows (`error` chunk): the last step's, for the three failures. */
export function failureText(stopReason: EndReason, trajectory: readonly StepRecord[]): string | null {
  if (stopReason !== 'model_error' && stopReason !== 'interpreter_error' && stopReason !== 'env_error') return null;
  return trajectory.at(-1)?.observation ?? null;
}

/** What a tool part left open says when a stop ended its turn: the reason, when one was given. */
export function stoppedText(stop: StopRequest): string {
  const what = 'The turn was stopped before this tool call finished';
  return stop.reason === undefined || stop.reason === '' ? `${what}.` : `${what}: ${stop.reason}`;
}
