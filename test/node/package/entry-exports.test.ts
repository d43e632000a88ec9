/**
 * What each entry of the package exports, at run time and as types, written out here: a change to
 * these lists is a change of the API, made on purpose and reviewed (docs/decisions/0064-a-small-root-entry.md).
 * The names are read from the source entry each `exports` subpath is built from, with the
 * TypeScript compiler, so a type-only export counts as much as a function. `polyloop/internal` is
 * listed too: it may change in any release, but never by accident.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
type Target = { readonly types: string; readonly default: string };
const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, string | Target>;
};

/** Names with a run-time meaning (functions, classes, constants), and names that are only types. */
type Listing = { readonly runtime: readonly string[]; readonly types: readonly string[] };

/** Subpath → the source file its build comes from (`./dist/core/index.js` ← `src/core/index.ts`). */
const SUBPATHS = Object.entries(pkg.exports)
  .filter(([subpath]) => subpath !== './package.json')
  .map(
    ([subpath, target]) =>
      [subpath, (target as Target).default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')] as const,
  );

/** Workers code imports `cloudflare:workers`, which plain Node cannot load. */
const NODE_LOADABLE = SUBPATHS.filter(([subpath]) => subpath !== './workers');

function isTypeOnlyExport(symbol: ts.Symbol): boolean {
  return (symbol.declarations ?? []).some(
    (d) => ts.isExportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly),
  );
}

/** Every name each file exports, split into run-time names and type-only names, each sorted. */
function listings(files: readonly string[]): Map<string, Listing> {
  const program = ts.createProgram(
    files.map((f) => resolve(ROOT, f)),
    {
      allowImportingTsExtensions: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      skipLibCheck: true,
      types: [],
    },
  );
  const checker = program.getTypeChecker();
  const out = new Map<string, Listing>();
  for (const file of files) {
    const source = program.getSourceFile(resolve(ROOT, file));
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${file}: not a module the compiler can read`);
    const runtime: string[] = [];
    const types: string[] = [];
    for (const symbol of checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      if (target.flags & ts.SymbolFlags.Value && !isTypeOnlyExport(symbol)) runtime.push(symbol.name);
      else types.push(symbol.name);
    }
    out.set(file, { runtime: runtime.sort(), types: types.sort() });
  }
  return out;
}

/** Reviewed by hand: `vitest -u` does not rewrite it. */
const EXPECTED: Readonly<Record<string, Listing>> = {
  '.': {
    runtime: [
      'CorruptLogError',
      'InMemoryStore',
      'InvalidInputError',
      'InvalidRequestError',
      'LeaseLostError',
      'LogCodec',
      'PolyLoopError',
      'RECORD_KINDS',
      'RECORD_MAJOR',
      'RECORD_VERSION',
      'RegistryExecutor',
      'RunExistsError',
      'RunIdentityMismatchError',
      'RunLockedError',
      'RunNotFoundError',
      'STANDARD_SYNTHETIC_OBSERVATIONS',
      'STOP_REASONS',
      'SchemaVersionError',
      'StopRequestedError',
      'StoreError',
      'ToolEnvironmentError',
      'ToolRegistry',
      'UpgradeRefusedError',
      'acceptedReplies',
      'agentTool',
      'childRunId',
      'childRunsOf',
      'consoleSink',
      'decodeLog',
      'decodeRecord',
      'defineAgent',
      'encodeLog',
      'encodeRecord',
      'exportRun',
      'forkRun',
      'identityMismatch',
      'identitySnapshot',
      'importRun',
      'innermostRequest',
      'isBarrier',
      'isPolyLoopError',
      'jsonActionInterpreter',
      'readRunLog',
      'requestStop',
      'resume',
      'run',
      'silentSink',
      'validateRunRequest',
    ],
    types: [
      'Action',
      'ActionDecision',
      'ActionExecutor',
      'ActionIntentRecord',
      'ActionOutcome',
      'ActionStatus',
      'ActionsDecision',
      'ActionsIntentRecord',
      'AgentConfig',
      'AgentDefaults',
      'AgentDefinition',
      'AgentParams',
      'AgentToolOptions',
      'Budget',
      'CallDecision',
      'CallInFlight',
      'CallPlan',
      'CallRecord',
      'CallResultRecord',
      'CallsInFlight',
      'ChildRequest',
      'ChildRequestInput',
      'ChildRunRef',
      'ConsoleSinkOptions',
      'ContentBlock',
      'Decision',
      'DecisionCall',
      'DecisionInterpreter',
      'DecodedLog',
      'EndReason',
      'EventSink',
      'ExecuteContext',
      'FinishReason',
      'ForkOptions',
      'ForkOrigin',
      'InFlightResolution',
      'InFlightStep',
      'InputRecord',
      'InputReply',
      'InputRequest',
      'InputRequestKind',
      'InputRequestRecord',
      'IntentRecord',
      'InterpretContext',
      'JsonObject',
      'JsonValue',
      'LogRecord',
      'Message',
      'ModelCall',
      'ModelCallIntentRecord',
      'ModelCaller',
      'ModelReply',
      'ModelToolSchema',
      'OpaqueBlock',
      'ParamSnapshot',
      'PolyLoopErrorCode',
      'ReadLogOptions',
      'ReasoningBlock',
      'ReleaseLease',
      'ReplayPolicy',
      'RequestProblem',
      'ResultRecord',
      'ResumeOptions',
      'ResumedRecord',
      'Role',
      'RunEndedRecord',
      'RunEvent',
      'RunEventType',
      'RunLogState',
      'RunLogView',
      'RunOptions',
      'RunRequest',
      'RunRequestInput',
      'RunResult',
      'RunStartedRecord',
      'RunStore',
      'SeamParams',
      'SettledRun',
      'SkillEntry',
      'StandardResult',
      'StandardSchemaV1',
      'StepActionStatus',
      'StepDecisionKind',
      'StepRecord',
      'StepWriteRecord',
      'StopReason',
      'StopRequest',
      'StoreWarning',
      'StoredLines',
      'StoredRequest',
      'SyntheticObservations',
      'TextBlock',
      'ToolCallBlock',
      'ToolCallRequest',
      'ToolCatalog',
      'ToolContext',
      'ToolDescriptor',
      'ToolHandler',
      'ToolRenderStyle',
      'ToolResultBlock',
      'ToolSpec',
      'UpgradeChange',
      'UpgradeOptions',
      'UpgradeRecord',
      'Usage',
      'ValidationResult',
    ],
  },
  './internal': {
    runtime: [
      'AppendLogStore',
      'INPUT_REPLY_TEXT_FIELD',
      'MAX_JSON_DEPTH',
      'STEP_DEFAULTS',
      'canonicalJson',
      'cappedStream',
      'checkEdit',
      'checkOptionKeys',
      'committedLines',
      'contentProblem',
      'conversationOf',
      'decisionProblem',
      'declaresMoreThan',
      'errorBody',
      'eventsRefusal',
      'inputReplyProblem',
      'jsonProblem',
      'jsonSchemaCheck',
      'messageProblem',
      'modelReplyProblem',
      'outcomeProblem',
      'readCapped',
      'readReadablePrefix',
      'readRunLogLines',
      'resolveRequest',
      'sinkHooks',
      'stepMessages',
    ],
    types: [
      'AssembledMessage',
      'CappedStreamOptions',
      'ErrorBody',
      'ForkBody',
      'ForkCreated',
      'InputAccepted',
      'LogAppend',
      'MessagePart',
      'OptionHints',
      'OptionKeys',
      'PrefixReading',
      'ResolvedRequest',
      'ResumeReading',
      'RunCreated',
      'RunList',
      'RunListItem',
      'RunPage',
      'RunStatus',
      'RunTrajectory',
      'SinkHooks',
      'StepMessages',
      'StopAnswer',
      'StopBody',
      'StoreWriteMethod',
      'UpgradeAccepted',
    ],
  },
  './node': {
    runtime: ['FileStore'],
    types: ['FileStoreOptions', 'FileStoreWarning'],
  },
  './web': {
    runtime: ['IndexedDBStore'],
    types: ['IndexedDBStoreOptions', 'LeaseMode', 'StoredRunInfo'],
  },
  './workers': {
    runtime: [
      'ChatTurnObjectBase',
      'DurableObjectStore',
      'RecordTooLargeError',
      'RunIndex',
      'RunObjectBase',
      'createApp',
      'createChatTurnObject',
      'createRunObject',
    ],
    types: [
      'AppOptions',
      'ChatTurnObjectOptions',
      'ChatTurnSetup',
      'CorsOptions',
      'DurableObjectSqlStorage',
      'DurableObjectStoreOptions',
      'HttpErrorCode',
      'RunIndexNamespace',
      'RunList',
      'RunListItem',
      'RunObjectOptions',
      'RunSetup',
      'RunSetupContext',
      'RunStatus',
      'RunTrajectory',
      'StoredLine',
      'UnreadableLog',
    ],
  },
  './postgres': {
    runtime: ['PostgresStore', 'migrate'],
    types: ['MigrateOptions', 'PgClientLike', 'PgPoolLike', 'PgQuery', 'PgResult', 'PostgresStoreOptions'],
  },
  './adapters/openai': {
    runtime: ['ModelCallError', 'OPENAI_BASE_URL', 'isModelCallError', 'openAIModel', 'openAIToolInterpreter'],
    types: ['FetchLike', 'ModelCallErrorKind', 'ModelProvider', 'OpenAIModelOptions'],
  },
  './adapters/anthropic': {
    runtime: ['ANTHROPIC_BASE_URL', 'ModelCallError', 'anthropicModel', 'anthropicToolInterpreter', 'isModelCallError'],
    types: ['AnthropicModelOptions', 'FetchLike', 'ModelCallErrorKind', 'ModelProvider'],
  },
  './adapters/ai-sdk': {
    runtime: [
      'AiSdkResponseTooLargeError',
      'AiSdkStreamError',
      'aiSdkCallOptions',
      'aiSdkModel',
      'aiSdkToolInterpreter',
    ],
    types: [
      'AiSdkBindingOptions',
      'AiSdkCallOptions',
      'AiSdkCallSettings',
      'AiSdkLanguageModel',
      'AiSdkLanguageModelV4',
      'AiSdkModelOptions',
      'AiSdkProviderOptions',
    ],
  },
  './zod': {
    runtime: ['ToolArgumentsError', 'defineTool'],
    types: ['ZodToolDefinition'],
  },
  './mcp': {
    runtime: ['connectMcp', 'mcpTools'],
    types: ['McpApproval', 'McpFetch', 'McpServerTools', 'McpToolOverride', 'McpToolsOptions'],
  },
  './chat': {
    runtime: ['chatEngine', 'chatHandler', 'chatRunId', 'loadChat', 'localChatTransport', 'toUIMessageStream'],
    types: [
      'ChatCallOptions',
      'ChatEngine',
      'ChatEngineOptions',
      'ChatHandlerOptions',
      'ChatOptions',
      'ChatStopOptions',
      'ChatStopResult',
      'ChatTurn',
      'LocalChatTransport',
      'LocalChatTransportOptions',
      'ToUIMessageStreamOptions',
    ],
  },
  './otel': {
    runtime: ['otelSink'],
    types: ['OtelSinkOptions'],
  },
  './testing': {
    runtime: [
      'ContractViolationError',
      'SimulatedCrashError',
      'actionExecutorContract',
      'collectingSink',
      'crashAtEveryWrite',
      'decisionInterpreterContract',
      'eventSinkContract',
      'faultyStore',
      'jsonActionInterpreter',
      'modelCallerContract',
      'runStoreContract',
      'scriptedModel',
    ],
    types: [
      'ActionExecutorContractOptions',
      'CollectingSink',
      'ContractCase',
      'ContractSuite',
      'CrashCase',
      'CrashLawOptions',
      'CrashLawReport',
      'CrashLawUpgrade',
      'DecisionInterpreterContractOptions',
      'EventSinkContractOptions',
      'FaultyStore',
      'ModelCallerContractOptions',
      'ModelScenario',
      'RunStoreContractOptions',
      'Script',
      'ScriptedModel',
      'ScriptedReply',
      'WriteMethod',
    ],
  },
};

describe('the names each entry exports (reviewed here on purpose: a change to these lists is an API change)', () => {
  const found = listings(SUBPATHS.map(([, file]) => file));

  it('lists exactly the subpaths of package.json exports', () => {
    expect(SUBPATHS.map(([subpath]) => subpath).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(SUBPATHS)('%s (%s) exports exactly these run-time names and types', (subpath, file) => {
    expect(found.get(file)).toEqual(EXPECTED[subpath]);
  });

  it.each(NODE_LOADABLE)('%s has at run time exactly the names counted as run-time here', async (_subpath, file) => {
    const module = (await import(resolve(ROOT, file))) as Record<string, unknown>;
    expect(Object.keys(module).sort()).toEqual(found.get(file)?.runtime);
  });
});
