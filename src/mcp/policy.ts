/**
 * What an MCP tool's annotations may decide: its replay policy and whether a person approves
 * each call — only for a server the user trusts, and never looser than the user's own word.
 * Pure functions of their inputs.
 * @module
 */
import type { ReplayPolicy } from '../core/index.ts';

/** The behaviour hints of an MCP tool (`tool.annotations`), as the server sent them. */
export type McpToolAnnotations = {
  readonly readOnlyHint?: unknown;
  readonly destructiveHint?: unknown;
  readonly idempotentHint?: unknown;
  readonly openWorldHint?: unknown;
};

/** The user's word on one tool; it wins over anything the server says. */
export type McpToolOverride = {
  /** The replay policy, whatever the annotations say (also for an untrusted server). */
  readonly replayPolicy?: ReplayPolicy;
  /** Whether a person approves each call, whatever `needsApproval` of the server says. */
  readonly needsApproval?: boolean;
};

/**
 * Which calls a person approves: `true` every call, `false` none, `'destructive'` those of tools
 * not shown to be harmless (see {@link isDestructive}).
 */
export type McpApproval = boolean | 'destructive';

/**
 * Whether a tool may change the outside world for the worse. The MCP specification's defaults
 * apply: a tool is destructive unless it is read-only or says `destructiveHint: false`. An
 * untrusted server's hints are not believed, so every one of its tools counts as destructive.
 */
export function isDestructive(annotations: McpToolAnnotations | undefined, trusted: boolean): boolean {
  if (!trusted) return true;
  return annotations?.readOnlyHint !== true && annotations?.destructiveHint !== false;
}

/**
 * The replay policy of one tool: the user's override; else `'never'` for an untrusted server;
 * else `'safe'` for a read-only tool, or an idempotent one that is not destructive (a missing
 * `destructiveHint` means destructive, as the MCP specification says); else `'never'`. Only
 * `true` counts as a hint being set: `"true"`, `1` or anything else a server sends is not.
 */
export function mcpReplayPolicy(
  annotations: McpToolAnnotations | undefined,
  trusted: boolean,
  override?: McpToolOverride,
): ReplayPolicy {
  if (override?.replayPolicy !== undefined) return override.replayPolicy;
  if (!trusted) return 'never';
  if (annotations?.readOnlyHint === true) return 'safe';
  if (annotations?.idempotentHint === true && annotations.destructiveHint === false) return 'safe';
  return 'never';
}

/** Whether a person approves each call of one tool: the user's override, else `approval` applied to the tool. */
export function needsApprovalOf(
  annotations: McpToolAnnotations | undefined,
  trusted: boolean,
  approval: McpApproval,
  override?: McpToolOverride,
): boolean {
  if (override?.needsApproval !== undefined) return override.needsApproval;
  if (approval === 'destructive') return isDestructive(annotations, trusted);
  return approval;
}
