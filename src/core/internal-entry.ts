/**
 * `polyloop/internal` — the plumbing this package's own platforms, adapters, chat, MCP, zod and
 * test kit share with the core: the stores' record writes, value checks, canonical JSON, the
 * options-bag check, request resolution, the conversation of a log, the step record's defaults.
 * Unstable: any release may change or remove a name here.
 * Also what the Worker and the run viewer share of the HTTP API (docs/http.md): its bodies, and
 * request and response bodies read with a byte limit.
 * Applications import from `polyloop` and the platform entries; see docs/api.md.
 * @module
 */
export { AppendLogStore } from './append-log-store.ts';
export type { LogAppend, StoreWriteMethod } from './append-log-store.ts';
export { cappedStream, declaresMoreThan, readCapped } from './capped-body.ts';
export type { CappedStreamOptions } from './capped-body.ts';
export { conversationOf } from './conversation.ts';
export { errorBody, eventsRefusal } from './http-bodies.ts';
export type {
  ErrorBody,
  InputAccepted,
  RunCreated,
  RunList,
  RunListItem,
  RunPage,
  RunStatus,
  RunTrajectory,
  UpgradeAccepted,
} from './http-bodies.ts';
export { jsonSchemaCheck } from './json-schema-check.ts';
export {
  contentProblem,
  decisionProblem,
  INPUT_REPLY_TEXT_FIELD,
  inputReplyProblem,
  jsonProblem,
  MAX_JSON_DEPTH,
  messageProblem,
  modelReplyProblem,
  outcomeProblem,
} from './internal/values.ts';
export { checkOptionKeys } from './options.ts';
export type { OptionHints, OptionKeys } from './options.ts';
export { resolveRequest } from './request-input.ts';
export type { ResolvedRequest } from './request-input.ts';
export { readReadablePrefix } from './run-log.ts';
export type { PrefixReading } from './run-log.ts';
export { canonicalJson } from './serialization.ts';
export { STEP_DEFAULTS } from './types.ts';
