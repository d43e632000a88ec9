/**
 * `polyloop/internal` — the plumbing this package's own platforms, adapters, chat, MCP, zod and
 * test kit share with the core: value checks, canonical JSON, the options-bag check, request
 * resolution, the conversation of a log. Unstable: any release may change or remove a name here.
 * Applications import from `polyloop` and the platform entries; see docs/api.md.
 * @module
 */
export { cappedStream, declaresMoreThan, readCapped } from './capped-body.ts';
export type { CappedStreamOptions } from './capped-body.ts';
export { conversationOf } from './conversation.ts';
export { jsonSchemaCheck } from './json-schema-check.ts';
export {
  contentProblem,
  decisionProblem,
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
export { canonicalJson } from './serialization.ts';
