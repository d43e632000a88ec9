/**
 * An MCP server's tools as ordinary `ToolSpec`s: listed once, fixed from then on (so they enter
 * a run's identity like any tool), with replay policies and approvals from the server's
 * annotations only when the user trusts that server.
 * @module
 */
import { InvalidRequestError, isPolyLoopError, ToolEnvironmentError, ToolRegistry } from '../core/index.ts';
import { checkOptionKeys } from '../core/internal-entry.ts';
import type { JsonObject, ToolHandler, ToolSpec } from '../core/index.ts';
import type { OptionKeys } from '../core/internal-entry.ts';
import { McpConnection } from './connection.ts';
import type { McpFetch } from './connection.ts';
import { needsApprovalOf, mcpReplayPolicy } from './policy.ts';
import type { McpApproval, McpToolAnnotations, McpToolOverride } from './policy.ts';
import { DEFAULT_MAX_RESULT_CHARS, renderResult, resultProblem, truncate } from './render.ts';

/** Options of {@link mcpTools} and {@link connectMcp}. */
export type McpToolsOptions = {
  /** The server's Streamable HTTP endpoint, e.g. `https://example.com/mcp`. */
  readonly url: string | URL;
  /**
   * Default false: every tool is `replayPolicy: 'never'`, whatever the server says. True: the
   * server's annotations are believed — read-only, or idempotent and not destructive → `'safe'`.
   */
  readonly trust?: boolean;
  /**
   * Put before every tool name, verbatim (`'github_'` makes `create_issue` `github_create_issue`).
   * Letters, digits, `_` and `-` only: model providers refuse any other character in a tool name.
   */
  readonly prefix?: string;
  /** Sent with every request (e.g. `Authorization`); never part of a run's identity. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Default: the global `fetch`. */
  readonly fetch?: McpFetch;
  /** Which calls a person approves: `true` all, `'destructive'` those not shown harmless, default `false` none. */
  readonly needsApproval?: McpApproval;
  /** Per tool, by the server's name for it: the user's replay policy or approval, which win over anything else. */
  readonly tools?: Readonly<Record<string, McpToolOverride>>;
  /** Take only these tools (the server's names); a name the server does not list is refused. Default: all. */
  readonly include?: readonly string[];
  /** A result longer than this many characters is cut, with a marker saying so. Default 100 000. */
  readonly maxResultChars?: number;
  /** A response body larger than this many bytes fails the call (`env_error`). Default 32 MiB. */
  readonly maxResponseBytes?: number;
  /** Each request to the server fails after this many milliseconds without an answer (`env_error`). Default 60 000. */
  readonly timeoutMs?: number;
  /** Cancels connecting and listing; once aborted, also closes the connection. */
  readonly signal?: AbortSignal;
};

/** The tools of one server, and the connection they call through. */
export type McpServerTools = {
  /**
   * One spec per tool, in the server's order: merge several servers with `ToolRegistry.of([...a.specs, ...b.specs])`.
   */
  readonly specs: readonly ToolSpec[];
  /** `ToolRegistry.of(specs)`. */
  readonly registry: ToolRegistry;
  /** Close the connection; calls made after it end as `env_error`. Idempotent. */
  close(): Promise<void>;
};

const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * Connect to an MCP server, list its tools (every page), and return them as a `ToolRegistry`.
 * The connection stays open for the handlers; pass `signal` to close it later, or use
 * {@link connectMcp} for a `close()`. Rejects with `ToolEnvironmentError` when the server cannot
 * be reached, and with `InvalidRequestError` naming the server and tool when a tool cannot be
 * used (a duplicate or empty name, a parameter schema that is not JSON Schema).
 *
 * @example
 * const tools = await mcpTools({ url: 'http://127.0.0.1:3000/mcp', trust: true, prefix: 'files_' });
 * const request = { ...rest, tools, executor: tools.executor() };
 */
export async function mcpTools(options: McpToolsOptions): Promise<ToolRegistry> {
  return (await connectMcp(options)).registry;
}

/** {@link mcpTools} with its specs and a `close()`. */
export async function connectMcp(options: McpToolsOptions): Promise<McpServerTools> {
  const settings = checkOptions(options);
  const connection = new McpConnection(settings.connection);
  const { signal } = options;
  const onAbort = (): void => void connection.close();
  // Taken off again at close: a long-lived signal must not keep closed connections reachable.
  const close = (): Promise<void> => {
    signal?.removeEventListener('abort', onAbort);
    return connection.close();
  };
  if (signal) {
    signal.throwIfAborted();
    signal.addEventListener('abort', onAbort, { once: true });
  }
  try {
    const listed = await connection.listTools(signal);
    const specs = buildSpecs(listed, settings, connection);
    const registry = refusingAsServer(connection.where, () => ToolRegistry.of(specs));
    return { specs, registry, close };
  } catch (e) {
    await close();
    throw e;
  }
}

type Settings = {
  readonly connection: ConstructorParameters<typeof McpConnection>[0];
  readonly trusted: boolean;
  readonly prefix: string;
  readonly approval: McpApproval;
  readonly overrides: Readonly<Record<string, McpToolOverride>>;
  readonly include: readonly string[] | null;
  readonly maxResultChars: number;
};

const MCP_OPTIONS: OptionKeys<McpToolsOptions> = {
  url: true,
  trust: true,
  prefix: true,
  headers: true,
  fetch: true,
  needsApproval: true,
  tools: true,
  include: true,
  maxResultChars: true,
  maxResponseBytes: true,
  timeoutMs: true,
  signal: true,
};
const OVERRIDE_OPTIONS: OptionKeys<McpToolOverride> = { replayPolicy: true, needsApproval: true };

function checkOptions(o: McpToolsOptions): Settings {
  const fail = (message: string): never => {
    throw new InvalidRequestError(`mcpTools: ${message}`);
  };
  checkOptionKeys(o, MCP_OPTIONS, 'mcpTools');
  if (o.tools !== undefined && !isRecord(o.tools))
    fail('tools must be an object of { replayPolicy?, needsApproval? } by tool name');
  for (const [name, override] of Object.entries(o.tools ?? {})) {
    checkOptionKeys(override, OVERRIDE_OPTIONS, `mcpTools tools[${JSON.stringify(name)}]`);
  }
  let url: URL | null = null;
  try {
    url = new URL(o.url);
  } catch {
    fail(`url is not a URL: ${JSON.stringify(String(o.url))}`);
  }
  if (url && url.protocol !== 'http:' && url.protocol !== 'https:')
    fail(`url must be http or https, got ${url.protocol}`);
  const positive = (v: number | undefined, name: string, fallback: number): number => {
    if (v === undefined) return fallback;
    return Number.isSafeInteger(v) && v > 0 ? v : fail(`${name} must be a positive integer`);
  };
  if (o.trust !== undefined && typeof o.trust !== 'boolean') fail('trust must be a boolean');
  if (o.prefix !== undefined && typeof o.prefix !== 'string') fail('prefix must be a string');
  if (typeof o.prefix === 'string' && !/^[a-zA-Z0-9_-]{0,63}$/.test(o.prefix)) {
    fail(
      'prefix may hold only letters, digits, _ and - (model providers refuse any other character in a tool name), ' +
        `got ${JSON.stringify(o.prefix)}`,
    );
  }
  if (o.needsApproval !== undefined && typeof o.needsApproval !== 'boolean' && o.needsApproval !== 'destructive')
    fail('needsApproval must be a boolean or "destructive"');
  if (o.fetch !== undefined && typeof o.fetch !== 'function') fail('fetch must be a function');
  if (o.include !== undefined && !(Array.isArray(o.include) && o.include.every((n) => typeof n === 'string')))
    fail('include must be an array of tool names');
  return {
    connection: {
      url: url as URL,
      headers: { ...(o.headers ?? {}) },
      fetch: o.fetch,
      timeoutMs: positive(o.timeoutMs, 'timeoutMs', DEFAULT_TIMEOUT_MS),
      maxResponseBytes: positive(o.maxResponseBytes, 'maxResponseBytes', DEFAULT_MAX_RESPONSE_BYTES),
    },
    trusted: o.trust === true,
    prefix: o.prefix ?? '',
    approval: o.needsApproval ?? false,
    overrides: o.tools ?? {},
    include: o.include ?? null,
    maxResultChars: positive(o.maxResultChars, 'maxResultChars', DEFAULT_MAX_RESULT_CHARS),
  };
}

/** The tool names OpenAI and Anthropic accept: a name outside it fails every model call of a run. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The specs of the listed tools that were asked for; a tool the server describes badly is refused, naming it. */
function buildSpecs(listed: readonly unknown[], s: Settings, connection: McpConnection): ToolSpec[] {
  const refuse = (message: string): never => {
    throw new InvalidRequestError(`MCP server ${connection.where}: ${message}`);
  };
  const tools = listed.map((t, i) =>
    isRecord(t) && typeof t['name'] === 'string' && t['name'] !== '' ? t : refuse(`tool #${i} has no name`),
  );
  const names = new Set(tools.map((t) => t['name'] as string));
  for (const name of [...(s.include ?? []), ...Object.keys(s.overrides)]) {
    if (!names.has(name))
      refuse(`no tool named ${JSON.stringify(name)} (the server lists ${[...names].join(', ') || 'none'})`);
  }
  const wanted = s.include === null ? tools : tools.filter((t) => s.include?.includes(t['name'] as string));
  return wanted.map((tool) => specOf(tool, s, connection, refuse));
}

function specOf(
  tool: Record<string, unknown>,
  s: Settings,
  connection: McpConnection,
  refuse: (m: string) => never,
): ToolSpec {
  const remote = tool['name'] as string;
  const { description = '', inputSchema, annotations } = tool;
  if (typeof description !== 'string') refuse(`tool ${JSON.stringify(remote)}: description is not a string`);
  if (!isRecord(inputSchema)) refuse(`tool ${JSON.stringify(remote)}: inputSchema is not an object`);
  const hints = isRecord(annotations) ? (annotations as McpToolAnnotations) : undefined;
  const override = Object.hasOwn(s.overrides, remote) ? s.overrides[remote] : undefined;
  const name = s.prefix + remote;
  if (!TOOL_NAME.test(name)) {
    const as = s.prefix === '' ? '' : `as ${JSON.stringify(name)}: `;
    refuse(
      `tool ${JSON.stringify(remote)} has a name model providers refuse ` +
        `(${as}only letters, digits, _ and -, at most 64 characters); leave it out with include`,
    );
  }
  return {
    name,
    description: description as string,
    parameters: inputSchema as JsonObject,
    replayPolicy: mcpReplayPolicy(hints, s.trusted, override),
    needsApproval: needsApprovalOf(hints, s.trusted, s.approval, override),
    handler: handlerOf(remote, s.maxResultChars, connection),
  };
}

/**
 * The handler of one tool: its result rendered and cut to size (`executed`, also for `isError`
 * and for a JSON-RPC error the server answered), `ToolEnvironmentError` when the server could not
 * be reached, `signal.reason` when aborted.
 */
function handlerOf(remote: string, maxChars: number, connection: McpConnection): ToolHandler {
  return async (args, { signal }) => {
    const answer = await connection.call(remote, args, signal);
    if (answer.kind === 'refused')
      return truncate(`The MCP server refused the call: ${answer.message} (JSON-RPC error ${answer.code})`, maxChars);
    const problem = resultProblem(answer.result);
    if (problem !== null)
      throw new ToolEnvironmentError(
        `MCP server ${connection.where}: tools/call ${JSON.stringify(remote)} answered ${problem}`,
      );
    return truncate(renderResult(answer.result), maxChars);
  };
}

/** Run `build`, saying which server a refused registry came from. */
function refusingAsServer<T>(where: string, build: () => T): T {
  try {
    return build();
  } catch (e) {
    if (isPolyLoopError(e, 'invalid_request'))
      throw new InvalidRequestError(`MCP server ${where}: ${e.message}`, { cause: e });
    throw e;
  }
}
