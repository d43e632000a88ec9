/**
 * `polyloop/workers` — PolyLoop on Cloudflare Workers: `DurableObjectStore` (a run log in
 * SQLite-backed Durable Object storage), the run Durable Object (`createRunObject`: one object
 * per run, resumed by its alarm after eviction), the run index (`RunIndex`: one object listing
 * the runs), the chat turn object (`createChatTurnObject`: one object per turn of a `useChat`
 * chat), and the `hono` app (`createApp`) serving the HTTP surface (docs/http.md). The demo agent and Worker entry of `npm run dev` live in
 * `examples/workers/`, so shipped source never imports `polyloop/testing`.
 * @module
 */
export { createApp, RUN_ID_PATTERN } from './app.ts';
export { ChatTurnObjectBase, createChatTurnObject } from './chat-turn-object.ts';
export type { ChatTurnObjectOptions, ChatTurnSetup } from './chat-turn-object.ts';
export { MAX_BODY_BYTES, MAX_IMPORT_BODY_BYTES } from './body.ts';
export type { AppOptions, CorsOptions, HttpErrorCode } from './app.ts';
export { DurableObjectStore, RecordTooLargeError } from './durable-object-store.ts';
export type { DurableObjectSqlStorage, DurableObjectStoreOptions, StoredLine } from './durable-object-store.ts';
export { createRunObject, RunObjectBase } from './run-object.ts';
export { RunIndex } from './run-index.ts';
export type { RunList, RunListItem, RunListQuery, RunReport } from './run-index.ts';
export { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from './run-list.ts';
export type { RunIndexNamespace } from './run-report.ts';
export type { CancelOutcome, InputOutcome, UpgradeOutcome } from './run-input.ts';
export type { RunObjectOptions, RunSetup, RunSetupContext, StartOutcome } from './run-setup.ts';
export { haltedStatusOf, statusOf, trajectoryOf } from './run-status.ts';
export type { RunStatus, RunTrajectory, UnreadableLog } from './run-status.ts';
export { formatLogEvent, logEventStream } from './sse.ts';
export type { LogEventStreamOptions, LogFeed } from './sse.ts';
