/**
 * `polyloop/mcp` — the tools of a Model Context Protocol server (Streamable HTTP, through the
 * official SDK's client) as ordinary `ToolSpec`s, in a tab, a Worker and Node. Every tool is
 * `replayPolicy: 'never'` unless the user trusts the server; then its annotations decide.
 * Needs the optional peer dependency `@modelcontextprotocol/client`.
 *
 * @example
 * import { connectMcp } from 'polyloop/mcp';
 * const server = await connectMcp({ url: 'http://127.0.0.1:3000/mcp', trust: true });
 * const request = { ...rest, tools: server.registry, executor: server.registry.executor() };
 * // … run, resume …
 * await server.close();
 * @module
 */
export { connectMcp, mcpTools } from './mcp-tools.ts';
export type { McpServerTools, McpToolsOptions } from './mcp-tools.ts';
export type { McpFetch } from './connection.ts';
export type { McpApproval, McpToolOverride } from './policy.ts';
// Not exported: how mcpTools reads a server's annotations (policy.ts: isDestructive, needsApprovalOf,
// mcpReplayPolicy, McpToolAnnotations) and renders its results (render.ts) — docs/mcp.md states both.
