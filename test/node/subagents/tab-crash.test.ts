import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { innermostRequest, readRunLog } from '../../../src/core/index.ts';
import type { InputReply, InputRequest, LogRecord, RunLogView } from '../../../src/core/index.ts';
import { startBundledPage } from '../e2e-web/harness.ts';
import type { Served } from '../e2e-web/harness.ts';
import type { SubAgentTab } from './tab-page.ts';

let site: Served;
let origin: string;
let browser: Browser;
// A fresh context per test: its own IndexedDB and localStorage, shared by its tabs.
let context: BrowserContext;

beforeAll(async () => {
  site = await startBundledPage(join(import.meta.dirname, 'tab-page.ts'), 'polyloop-sub-agent-tab-');
  ({ origin, browser } = site);
}, 30_000);

beforeEach(async () => {
  context = await browser.newContext();
});

afterEach(async () => {
  await context.close();
});

afterAll(async () => {
  await site?.close();
});

type Summary = Awaited<ReturnType<SubAgentTab['start']>>;
type Tab = { readonly page: Page; readonly errors: string[] };
type Logs = { readonly parent: readonly LogRecord[]; readonly child: readonly LogRecord[] };

async function openTab(query = ''): Promise<Tab> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${origin}/?${query}`);
  await page.waitForFunction(() => document.documentElement.dataset['ready'] === 'true');
  return { page, errors };
}

/** Call `subAgentTab[method](...args)` in the tab (the function runs in the page, so it names no test code). */
function call<K extends keyof SubAgentTab>(
  tab: Tab,
  method: K,
  ...args: Parameters<SubAgentTab[K]>
): Promise<Awaited<ReturnType<SubAgentTab[K]>>> {
  // The arguments cross as plain JSON; typed loosely here, as a reply's JSON arguments are too deep to infer.
  const sent: [string, unknown[]] = [method, args];
  return tab.page.evaluate(([m, a]) => {
    const api = (globalThis as unknown as { subAgentTab: Record<string, (...x: unknown[]) => unknown> }).subAgentTab;
    return api[m]?.(...a);
  }, sent) as Promise<Awaited<ReturnType<SubAgentTab[K]>>>;
}

const start = (tab: Tab, runId: string): Promise<Summary> => call(tab, 'start', runId);
const resumeIn = (tab: Tab, runId: string, input?: InputReply): Promise<Summary> => call(tab, 'resume', runId, input);
const noteRuns = (tab: Tab): Promise<string[]> => call(tab, 'noteRuns');
const logsIn = async (tab: Tab, runId: string, childRunId: string): Promise<Logs> => ({
  parent: await call(tab, 'log', runId),
  child: await call(tab, 'log', childRunId),
});
const view = (records: readonly LogRecord[]): RunLogView => readRunLog(records);

/** Tab 1: start the parent until its child asks for approval (`s0.c0`), then close the tab. */
async function startAndClose(runId: string): Promise<string> {
  const tab = await openTab();
  const asked = await start(tab, runId);
  expect(asked).toMatchObject({ stopReason: 'awaiting_input', pending: { kind: 'child', resultId: 's0.c0' } });
  const pending = asked.pending as InputRequest;
  expect(innermostRequest(pending)).toMatchObject({ kind: 'approval', resultId: 's0.input' });
  await tab.page.close();
  expect(tab.errors).toEqual([]);
  return pending.child?.runId as string;
}

/** `before` is the start of `after`, record for record. */
function expectPrefix(after: Logs, before: Logs): void {
  expect(after.parent.slice(0, before.parent.length)).toEqual(before.parent);
  expect(after.child.slice(0, before.child.length)).toEqual(before.child);
}

function expectBothEnded(logs: Logs, childRunId: string): void {
  const parent = view(logs.parent);
  const child = view(logs.child);
  expect(parent.ended).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'parent done' });
  expect(child.ended).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'the answer is 42' });
  expect(parent.trajectory[0]).toMatchObject({ observation: 'the answer is 42', childRunId });
  expect(child.trajectory[0]?.actionStatus).toBe('executed');
}

describe("a sub-agent's approval across a closed Chromium tab (IndexedDBStore)", () => {
  it('is answered in a new tab resuming the parent by id: both runs end, the never tool ran once', async () => {
    const childRunId = await startAndClose('tab-1');
    const tab = await openTab();
    const before = await logsIn(tab, 'tab-1', childRunId);
    expect(view(before.child).state).toBe('awaiting_input');
    expect(await noteRuns(tab)).toEqual([]);
    const done = await resumeIn(tab, 'tab-1', { kind: 'approve', resultId: 's0.c0' });
    expect(done).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'parent done', pending: null });
    const after = await logsIn(tab, 'tab-1', childRunId);
    expectPrefix(after, before);
    expectBothEnded(after, childRunId);
    expect(await noteRuns(tab)).toEqual(['found it']);
    await tab.page.close();
    expect(tab.errors).toEqual([]);
  });

  it(
    'closed again while the approved tool runs, is settled in a third tab (executed): ' + 'the tool does not run twice',
    async () => {
      const childRunId = await startAndClose('tab-2');
      const held = await openTab('hold=note');
      // The tool never returns: the tab closes under it, once it counted its run.
      const approving = resumeIn(held, 'tab-2', { kind: 'approve', resultId: 's0.c0' }).then(
        (r) => `the approval ended before the tool ran: ${JSON.stringify(r)}`,
        (e: unknown) => `the approval failed before the tool ran: ${String(e)}`,
      );
      const counted = held.page
        .waitForFunction(() => (localStorage.getItem('note-runs') ?? '[]') !== '[]')
        .then(
          () => 'counted',
          (e: unknown) => `never counted: ${String(e)}`,
        );
      expect(await Promise.race([counted, approving])).toBe('counted');
      await held.page.close();

      const tab = await openTab();
      const before = await logsIn(tab, 'tab-2', childRunId);
      expect(view(before.child).inFlight).not.toBeNull();
      const asked = await resumeIn(tab, 'tab-2');
      expect(asked).toMatchObject({ stopReason: 'awaiting_input', pending: { kind: 'child', resultId: 's0.c1' } });
      const settle = innermostRequest(asked.pending as InputRequest);
      expect(settle).toMatchObject({ kind: 'settle', target: 'action' });
      expect(settle.decision?.action).toMatchObject({ name: 'note', arguments: { text: 'found it' } });
      const input = { kind: 'executed', resultId: 's0.c1', observation: 'noted found it' } as const;
      const done = await resumeIn(tab, 'tab-2', input);
      expect(done).toMatchObject({ stopReason: 'final_answer', finalAnswer: 'parent done' });
      const after = await logsIn(tab, 'tab-2', childRunId);
      expectPrefix(after, before);
      expectBothEnded(after, childRunId);
      expect(view(after.child).trajectory[0]?.observation).toBe('noted found it');
      expect(await noteRuns(tab)).toEqual(['found it']);
      await tab.page.close();
      expect(tab.errors).toEqual([]);
    },
  );
});
