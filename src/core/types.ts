/**
 * Public value types of PolyLoop, one module per topic under `types/`: messages and blocks,
 * decisions and actions, records, the log view and results, events. This module and those import
 * nothing but each other (docs/design/README.md#dependency-rules, rule 2).
 * @module
 */
export * from './types/messages.ts';
export * from './types/decisions.ts';
export * from './types/records.ts';
export * from './types/input.ts';
export * from './types/log-view.ts';
export * from './types/events.ts';
