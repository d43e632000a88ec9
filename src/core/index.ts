/**
 * PolyLoop core — the `polyloop` entry: what an application calls. Web-standard APIs only; loads
 * no store or adapter code. The plumbing the package's own platforms share is `polyloop/internal`
 * (src/core/internal-entry.ts), which is unstable.
 * @module
 */
export {
  CorruptLogError,
  InvalidInputError,
  InvalidRequestError,
  isPolyLoopError,
  LeaseLostError,
  PolyLoopError,
  RunExistsError,
  RunIdentityMismatchError,
  RunLockedError,
  RunNotFoundError,
  SchemaVersionError,
  StopRequestedError,
  StoreError,
  ToolEnvironmentError,
  UpgradeRefusedError,
} from './errors.ts';
export type { PolyLoopErrorCode, RequestProblem } from './errors.ts';
export { agentTool } from './agent-tool.ts';
export type { AgentToolOptions, ChildRequestInput } from './agent-tool.ts';
export { childRunId } from './child-runs.ts';
export { forkRun, requestStop } from './control.ts';
export type { ForkOptions } from './control.ts';
export { acceptedReplies, innermostRequest } from './internal/input.ts';
export { InMemoryStore } from './memory-store.ts';
export { jsonActionInterpreter } from './json-interpreter.ts';
export { consoleSink, silentSink } from './sinks.ts';
export type { ConsoleSinkOptions } from './sinks.ts';
export { STANDARD_SYNTHETIC_OBSERVATIONS } from './standard-observations.ts';
export { checkRequest as validateRunRequest } from './request-checks.ts';
export type {
  AgentConfig,
  AgentDefaults,
  AgentDefinition,
  AgentParams,
  ResumeOptions,
  RunOptions,
  RunRequest,
  RunRequestInput,
  SyntheticObservations,
  UpgradeOptions,
} from './request.ts';
export { childRunsOf, exportRun, importRun, readRunLog } from './run-log.ts';
export type { ChildRunRef } from './run-log.ts';
export { defineAgent, resume, run } from './run.ts';
export { identityMismatch, identitySnapshot } from './snapshot.ts';
export type {
  ActionExecutor,
  DecisionInterpreter,
  InterpretContext,
  EventSink,
  ExecuteContext,
  ModelCall,
  ModelCaller,
  ReadLogOptions,
  StoredLines,
  ReleaseLease,
  RunStore,
  SettledRun,
  StoreWarning,
} from './ports.ts';
export {
  decodeLog,
  decodeRecord,
  encodeLog,
  encodeRecord,
  LogCodec,
  RECORD_MAJOR,
} from './serialization.ts';
export type { DecodedLog } from './serialization.ts';
export { isBarrier } from './store-write.ts';
export { RegistryExecutor, ToolRegistry } from './tools.ts';
export type { StandardResult, StandardSchemaV1, ToolContext, ToolHandler, ToolSpec } from './tools.ts';
export { RECORD_KINDS, RECORD_VERSION, STOP_REASONS } from './types.ts';
export type {
  Action,
  ActionDecision,
  ActionIntentRecord,
  ActionOutcome,
  ActionsDecision,
  ActionsIntentRecord,
  ActionStatus,
  Budget,
  CallDecision,
  CallInFlight,
  CallPlan,
  CallRecord,
  CallResultRecord,
  CallsInFlight,
  ChildRequest,
  ContentBlock,
  Decision,
  DecisionCall,
  EndReason,
  FinishReason,
  InFlightResolution,
  InFlightStep,
  InputRecord,
  InputReply,
  InputRequest,
  InputRequestKind,
  InputRequestRecord,
  IntentRecord,
  JsonObject,
  JsonValue,
  LogRecord,
  Message,
  ModelCallIntentRecord,
  ModelReply,
  ModelToolSchema,
  OpaqueBlock,
  ParamSnapshot,
  ReasoningBlock,
  ReplayPolicy,
  ResultRecord,
  Role,
  RunEndedRecord,
  RunEvent,
  RunEventType,
  RunLogState,
  RunLogView,
  RunResult,
  RunStartedRecord,
  StopRequest,
  ForkOrigin,
  SeamParams,
  SkillEntry,
  StepActionStatus,
  StepDecisionKind,
  StepRecord,
  StepWriteRecord,
  StopReason,
  StoredRequest,
  TextBlock,
  ToolCallBlock,
  ToolCallRequest,
  ToolCatalog,
  ToolDescriptor,
  ToolRenderStyle,
  ToolResultBlock,
  UpgradeChange,
  UpgradeRecord,
  ResumedRecord,
  Usage,
  ValidationResult,
} from './types.ts';
