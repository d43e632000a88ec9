/**
 * The sub-agent crash tests' family on a durable store, for any runtime (a Node process, a
 * Chromium tab): a parent whose `research` tool runs a child; the child's `note` tool needs
 * approval and never replays. What `note` does is the caller's: it counts its runs where they
 * outlive the process or the tab.
 */
import { agentTool, defineAgent, ToolRegistry } from '../../../src/core/index.ts';
import type { AgentDefinition, RunStore, ToolSpec } from '../../../src/core/index.ts';
import { jsonActionInterpreter, scriptedModel } from '../../../src/testing/index.ts';
import { defaultsFor, SYNTHETIC } from './family.ts';

export type StoredFamily = { readonly parent: AgentDefinition; readonly child: AgentDefinition };

export type StoredFamilyOptions = {
  readonly childStore: RunStore;
  readonly parentStore: RunStore;
  /** The `note` tool's side effect; what it returns is the observation. */
  readonly note: (text: string) => Promise<string>;
};

/** The child: a note (approved by a person), then its answer. The parent: research, then its answer. */
const CHILD_SCRIPT = ['{"tool":"note","args":{"text":"found it"}}', '{"final":"the answer is 42"}'];
const PARENT_SCRIPT = ['{"tool":"research","args":{"question":"what is it?"}}', '{"final":"parent done"}'];
const BUDGET = { maxSteps: 10, maxValidActions: 10, maxContextChars: 100_000 };
const SILENT = { params: { sink: 'none' }, deliver: () => undefined };

export function storedFamily(opts: StoredFamilyOptions): StoredFamily {
  const note: ToolSpec = {
    name: 'note',
    description: 'Write a note (a side effect that must not repeat).',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    replayPolicy: 'never',
    needsApproval: true,
    handler: (args) => opts.note(String(args['text'])),
  };
  const childTools = ToolRegistry.of([note]);
  const child = defineAgent({
    model: scriptedModel(CHILD_SCRIPT, { model: 'crash-child' }),
    interpreter: jsonActionInterpreter(),
    store: opts.childStore,
    events: SILENT,
    syntheticObservations: SYNTHETIC,
    defaults: defaultsFor(childTools, { cancelGraceMs: 1_000, budget: BUDGET }),
  });
  const research = agentTool({
    name: 'research',
    description: 'Research a question with a sub-agent.',
    parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
    agent: child,
    request: (args) => ({ goal: String(args['question']) }),
  });
  const parentTools = ToolRegistry.of([research]);
  const parent = defineAgent({
    model: scriptedModel(PARENT_SCRIPT, { model: 'crash-parent' }),
    interpreter: jsonActionInterpreter(),
    store: opts.parentStore,
    events: SILENT,
    syntheticObservations: SYNTHETIC,
    defaults: defaultsFor(parentTools, { cancelGraceMs: 1_000, budget: BUDGET }),
  });
  return { parent, child };
}
