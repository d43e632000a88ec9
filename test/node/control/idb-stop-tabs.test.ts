import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readRunLog } from '../../../src/core/index.ts';
import type { InputReply, LogRecord } from '../../../src/core/index.ts';
import { startBundledPage } from '../e2e-web/harness.ts';
import type { Served } from '../e2e-web/harness.ts';
import type { Scenario, StopTab, World } from './idb-stop-page.ts';

let site: Served;
let origin: string;
let browser: Browser;
// A fresh context per test: its own IndexedDB and localStorage, shared by its tabs.
let context: BrowserContext;

beforeAll(async () => {
  site = await startBundledPage(join(import.meta.dirname, 'idb-stop-page.ts'), 'polyloop-idb-stop-');
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

type Tab = { readonly page: Page; readonly errors: string[] };
type Summary = Awaited<ReturnType<StopTab['start']>>;

async function openTab(): Promise<Tab> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => document.documentElement.dataset['ready'] === 'true');
  return { page, errors };
}

/** Call `stopTab[method](...args)` in the tab (the function runs in the page, so it names no test code). */
function call<T>(tab: Tab, method: keyof StopTab, ...args: unknown[]): Promise<T> {
  const pair: [string, unknown[]] = [method, args];
  return tab.page.evaluate(([m, a]) => {
    const api = (globalThis as unknown as { stopTab: Record<string, (...x: unknown[]) => unknown> }).stopTab;
    return api[m]?.(...a);
  }, pair) as Promise<T>;
}

const start = (tab: Tab, runId: string, scenario: Scenario): Promise<Summary> => call(tab, 'start', runId, scenario);
const resumeIn = (tab: Tab, runId: string, input?: InputReply): Promise<Summary> =>
  call(tab, 'resume', runId, ...(input ? [input] : []));
const stopFrom = (tab: Tab, runId: string, reason: string): Promise<void> => call(tab, 'stop', runId, reason);
const logIn = (tab: Tab, runId: string): Promise<readonly LogRecord[]> => call(tab, 'log', runId);
const worldIn = (tab: Tab): Promise<World> => call(tab, 'world');

/** Resolves once the tab's slow model call or tool is waiting. */
async function waitingIn(tab: Tab, where: 'model' | 'tool'): Promise<void> {
  await tab.page.waitForFunction((w) => document.documentElement.dataset['waiting'] === w, where);
}

/**
 * Resolves once `tab` reads the run in flight. A run's first records (`run_started`, a safe model
 * call's intent) are held in its driver's memory until its next write or for 50 ms (decision
 * 0043); until they land another tab sees no run, and `requestStop` there is `RunNotFoundError`.
 */
async function inFlightFor(tab: Tab, runId: string): Promise<void> {
  while (readRunLog(await logIn(tab, runId)).state !== 'in_flight') await new Promise((r) => setTimeout(r, 20));
}

const stopSaw = (where: 'model' | 'tool', reason: string) => ({
  where,
  name: 'StopRequestedError',
  code: 'stop_requested',
  stop: { reason },
});

/** The run ended cancelled by the stop: in its result and in its log's last record. */
async function expectStopped(result: Summary, tab: Tab, runId: string, reason: string): Promise<readonly LogRecord[]> {
  expect(result).toMatchObject({ stopReason: 'cancelled', stopRequest: { reason }, pending: null });
  const log = await logIn(tab, runId);
  const view = readRunLog(log);
  expect(view.state).toBe('ended');
  expect(log.at(-1)).toMatchObject({ kind: 'run_ended', stopReason: 'cancelled', stopRequest: { reason } });
  return log;
}

async function closeClean(...tabs: Tab[]): Promise<void> {
  for (const tab of tabs) {
    if (!tab.page.isClosed()) await tab.page.close();
    expect(tab.errors).toEqual([]);
  }
}

describe('a stop asked from a second Chromium tab (IndexedDBStore)', () => {
  it('ends a run inside a slow model call: cancelled with the reason, the call saw StopRequestedError, no reply recorded', async () => {
    const driver = await openTab();
    const other = await openTab();
    const running = start(driver, 'in-model', 'model');
    await waitingIn(driver, 'model');
    await inFlightFor(other, 'in-model');
    await stopFrom(other, 'in-model', 'the person changed their mind');
    const log = await expectStopped(await running, other, 'in-model', 'the person changed their mind');
    expect(log.some((r) => r.kind === 'result')).toBe(false);
    expect(await worldIn(other)).toEqual({
      modelCalls: [0],
      saw: [stopSaw('model', 'the person changed their mind')],
      toolRuns: 0,
      paid: [],
    });
    await closeClean(driver, other);
  });

  it('ends a run inside a slow tool: cancelled with the reason, the handler saw StopRequestedError, no further model call', async () => {
    const driver = await openTab();
    const other = await openTab();
    const running = start(driver, 'in-tool', 'tool');
    await waitingIn(driver, 'tool');
    await stopFrom(other, 'in-tool', 'too slow');
    await expectStopped(await running, other, 'in-tool', 'too slow');
    expect(await worldIn(other)).toEqual({
      modelCalls: [0],
      saw: [stopSaw('tool', 'too slow')],
      toolRuns: 1,
      paid: [],
    });
    await closeClean(driver, other);
  });

  it('ends a run that awaits approval at its next resume: the approval given then is not carried out', async () => {
    const driver = await openTab();
    const other = await openTab();
    const asked = await start(driver, 'at-approval', 'approval');
    expect(asked).toMatchObject({ stopReason: 'awaiting_input', pending: { kind: 'approval', resultId: 's0.input' } });
    await stopFrom(other, 'at-approval', 'not this payment');
    const done = await resumeIn(driver, 'at-approval', { kind: 'approve', resultId: 's0.input' });
    const log = await expectStopped(done, other, 'at-approval', 'not this payment');
    expect(log.map((r) => r.kind)).toEqual(['run_started', 'intent', 'result', 'input_request', 'run_ended']);
    expect(await worldIn(other)).toEqual({ modelCalls: [0], saw: [], toolRuns: 0, paid: [] });
    await closeClean(driver, other);
  });

  it('is honoured by the next tab that resumes a run no tab drives (its tab closed inside the tool), before anything runs', async () => {
    const driver = await openTab();
    const running = start(driver, 'orphan-tool', 'tool').catch(() => null);
    await waitingIn(driver, 'tool');
    await driver.page.close();
    await running;
    const other = await openTab();
    const before = await logIn(other, 'orphan-tool');
    expect(readRunLog(before).state).toBe('in_flight');
    await stopFrom(other, 'orphan-tool', 'abandoned');
    const next = await openTab();
    const log = await expectStopped(await resumeIn(next, 'orphan-tool'), next, 'orphan-tool', 'abandoned');
    // Nothing but the run's end was added: no settlement asked, no model call, the tool not run again.
    expect(log.slice(0, before.length)).toEqual(before);
    expect(log).toHaveLength(before.length + 1);
    expect(await worldIn(next)).toEqual({ modelCalls: [0], saw: [], toolRuns: 1, paid: [] });
    await closeClean(driver, other, next);
  });

  it('is honoured by the next tab that resumes a run whose tab closed inside a model call: the model is not called again', async () => {
    const driver = await openTab();
    const other = await openTab();
    const running = start(driver, 'orphan-model', 'model').catch(() => null);
    await waitingIn(driver, 'model');
    await inFlightFor(other, 'orphan-model');
    await driver.page.close();
    await running;
    await stopFrom(other, 'orphan-model', 'abandoned');
    const before = await logIn(other, 'orphan-model');
    const log = await expectStopped(await resumeIn(other, 'orphan-model'), other, 'orphan-model', 'abandoned');
    expect(log).toHaveLength(before.length + 1);
    expect(await worldIn(other)).toEqual({ modelCalls: [0], saw: [], toolRuns: 0, paid: [] });
    await closeClean(driver, other);
  });
});
