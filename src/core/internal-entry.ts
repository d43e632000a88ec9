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
// One statement a module; a module that is shared plumbing through and through goes out whole
// (test/node/package/entry-exports.test.ts lists every name, so none is added by accident).
export * from './append-log-store.ts';
export * from './capped-body.ts';
export { conversationOf } from './conversation.ts';
export { checkEdit } from './edits.ts';
export * from './http-bodies.ts';
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
export { committedLines, type ResumeReading, readRunLogLines } from './log-lines.ts';
export { checkOptionKeys, type OptionHints, type OptionKeys } from './options.ts';
export { type ResolvedRequest, resolveRequest } from './request-input.ts';
export { type PrefixReading, readReadablePrefix } from './run-log.ts';
export { canonicalJson } from './serialization.ts';
export { type SinkHooks, sinkHooks } from './sinks.ts';
export { type AssembledMessage, type MessagePart, type StepMessages, stepMessages } from './step-messages.ts';
export { STEP_DEFAULTS } from './types.ts';
