/**
 * `polyloop/workers` — PolyLoop on Cloudflare Workers: `DurableObjectStore` (a run log in
 * SQLite-backed Durable Object storage), the run Durable Object (`createRunObject`: one object
 * per run, resumed by its alarm after eviction), the run index (`RunIndex`: one object listing
 * the runs), the chat turn object (`createChatTurnObject`: one object per turn of a `useChat`
 * chat), and the `hono` app (`createApp`) serving the HTTP surface (docs/http.md). The demo
 * agent and Worker entry of `npm run dev` live in `examples/workers/`, so shipped source never
 * imports `polyloop/testing`.
 * @module
 */
export { createApp } from './app.ts';
export type { AppOptions, CorsOptions, HttpErrorCode } from './app.ts';
export { ChatTurnObjectBase, createChatTurnObject } from './chat-turn-object.ts';
export type { ChatTurnObjectOptions, ChatTurnSetup } from './chat-turn-object.ts';
export { DurableObjectStore, RecordTooLargeError } from './durable-object-store.ts';
export type { DurableObjectSqlStorage, DurableObjectStoreOptions, StoredLine } from './durable-object-store.ts';
export { createRunObject, RunObjectBase } from './run-object.ts';
export { RunIndex } from './run-index.ts';
export type { RunList, RunListItem } from './run-index.ts';
export type { RunIndexNamespace } from './run-report.ts';
export type { RunObjectOptions, RunSetup, RunSetupContext } from './run-setup.ts';
export type { RunStatus, RunTrajectory, UnreadableLog } from './run-status.ts';
// Not exported: the HTTP surface's limits and patterns (MAX_BODY_BYTES, MAX_IMPORT_BODY_BYTES,
// RUN_ID_PATTERN, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT: docs/http.md states them), the readers behind
// the routes (statusOf, haltedStatusOf, trajectoryOf), the event stream of a log (logEventStream,
// formatLogEvent) and the outcomes the run object's methods hand the app (StartOutcome,
// CancelOutcome, InputOutcome, UpgradeOutcome, RunReport, RunListQuery): createApp and
// createRunObject serve them.
