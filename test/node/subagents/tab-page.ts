/**
 * The page of the sub-agent tab test (bundled with esbuild, opened in Chromium tabs the test
 * closes): the family of stored-family.ts on IndexedDBStore. Each run of the child's `note` tool
 * adds its text to `note-runs` in localStorage, which outlives the tab; with `?hold=note` the tool,
 * having counted, never returns, so the tab closes while it runs. The test drives the page
 * through `globalThis.subAgentTab`.
 */
import { resume, run } from '../../../src/core/index.ts';
import type { InputReply, LogRecord, RunResult } from '../../../src/core/index.ts';
import { IndexedDBStore } from '../../../src/platform-web/index.ts';
import { storedFamily } from './stored-family.ts';

const NOTE_RUNS = 'note-runs';
const hold = new URLSearchParams(location.search).get('hold') === 'note';
const store = new IndexedDBStore({ dbName: 'polyloop-sub-agent-tab' });

const noteRuns = (): string[] => JSON.parse(localStorage.getItem(NOTE_RUNS) ?? '[]') as string[];

const { parent } = storedFamily({
  childStore: store,
  parentStore: store,
  note: async (text) => {
    localStorage.setItem(NOTE_RUNS, JSON.stringify([...noteRuns(), text]));
    if (hold) await new Promise<never>(() => undefined);
    return `noted ${text}`;
  },
});

/** What the test reads of a result: plain JSON. */
const summary = (r: RunResult) => ({ stopReason: r.stopReason, finalAnswer: r.finalAnswer, pending: r.pending });

export type SubAgentTab = {
  start(runId: string): Promise<ReturnType<typeof summary>>;
  resume(runId: string, input?: InputReply): Promise<ReturnType<typeof summary>>;
  log(runId: string): Promise<readonly LogRecord[]>;
  noteRuns(): string[];
};

const tab: SubAgentTab = {
  start: async (runId) => summary(await run(parent, { runId, goal: 'find it' })),
  resume: async (runId, input) => summary(await resume(parent, runId, input ? { input } : {})),
  log: (runId) => store.readLog(runId),
  noteRuns,
};
(globalThis as { subAgentTab?: SubAgentTab }).subAgentTab = tab;
document.documentElement.dataset['ready'] = 'true';
