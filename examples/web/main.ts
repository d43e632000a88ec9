/**
 * The web example: an agent that runs in this tab, writes every step to IndexedDB, and carries
 * on after a reload. It asks the person who should get its report and asks them to approve the
 * email; the question stays on screen across reloads and across closing the tab and opening a
 * new one, because the log in IndexedDB says what is pending. Open it in two tabs: one drives
 * the run, the other waits and watches.
 * Query parameters: `run` (run id), `think` and `tool` (milliseconds each model call / tool takes),
 * `goal=pair` (two emails in one reply, each approved on its own).
 */
import { isPolyLoopError, readRunLog, resume, run } from '../../src/core/index.ts';
import type {
  EventSink,
  InputReply,
  InputRequest,
  RunEvent,
  RunResult,
  RunStore,
  StepRecord,
} from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { sleep } from '../../src/testing/scripted-model.ts';
import { demoAgent, demoRequest } from './agent.ts';
import type { Email } from './agent.ts';
import { renderRequests } from './pending.ts';
import { runningItem, stepItem, stepLabel } from './steps.ts';
import { mountWorkerPanel } from './worker-panel.ts';

type State = 'idle' | 'waiting' | 'running' | 'awaiting' | 'finished' | 'failed';

const query = new URLSearchParams(location.search);
const runId = query.get('run') ?? 'weather-demo';
const goal = query.get('goal') === 'pair' ? 'pair' : 'weather';
const pace = { thinkMs: Number(query.get('think') ?? 500), toolMs: Number(query.get('tool') ?? 900) };
const store = new IndexedDBStore({ dbName: 'polyloop-web-example' });
const OUTBOX_KEY = 'polyloop-web-example-outbox';

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const view = {
  state: $('state'),
  banner: $('banner'),
  steps: $<HTMLOListElement>('steps'),
  answer: $('answer'),
  start: $<HTMLButtonElement>('start'),
  fresh: $<HTMLButtonElement>('fresh'),
  runId: $('run-id'),
  driver: $('driver'),
  pending: $('pending'),
  outbox: $<HTMLUListElement>('outbox'),
};

let steps: StepRecord[] = [];
let inFlight: { readonly stepIndex: number; readonly text: string } | null = null;
let executions = 0;
let shown: string | null = null;
let watch: ReturnType<typeof setInterval> | undefined;

function setState(state: State, banner?: string): void {
  document.body.dataset['state'] = state;
  view.state.textContent = state;
  view.state.className = `pill ${state}`;
  view.start.hidden = state !== 'idle';
  if (banner !== undefined) view.banner.textContent = banner;
}

function setPhase(phase: string): void {
  document.body.dataset['phase'] = phase;
}

/** The outbox is the world outside the run: it lives in localStorage, not in the run's log. */
function outbox(): (Email & { readonly runId: string })[] {
  return JSON.parse(localStorage.getItem(OUTBOX_KEY) ?? '[]') as (Email & { runId: string })[];
}

async function sendEmail(email: Email): Promise<void> {
  await sleep(pace.toolMs);
  localStorage.setItem(OUTBOX_KEY, JSON.stringify([...outbox(), { runId, ...email }]));
  render();
}

function render(): void {
  const items = steps.map(stepItem);
  if (inFlight) items.push(runningItem(inFlight.stepIndex, inFlight.text));
  view.steps.replaceChildren(...items);
  view.driver.textContent = `weather lookups run by this tab: ${executions}`;
  const mail = outbox().filter((m) => m.runId === runId);
  view.outbox.replaceChildren(
    ...mail.map((m) =>
      Object.assign(document.createElement('li'), { textContent: `to ${m.to} — ${m.subject}: ${m.body}` }),
    ),
  );
}

function onEvent(e: RunEvent): void {
  if (e.type === 'run_started') {
    setState(
      'running',
      e.resumed ? `Resumed after reopening — continuing from step ${stepLabel(e.fromStep)}.` : 'Running in this tab.',
    );
    if (e.resumed) document.body.dataset['resumed'] = 'true';
  } else if (e.type === 'step_started') {
    inFlight = { stepIndex: e.stepIndex, text: 'thinking…' };
    setPhase(`model:${e.stepIndex}`);
  } else if (e.type === 'action_started') {
    const args = e.action.kind === 'tool_call' ? JSON.stringify(e.action.arguments) : '';
    inFlight = { stepIndex: e.stepIndex, text: e.action.kind === 'tool_call' ? `${e.action.name}(${args})` : 'code' };
    setPhase(`action:${e.stepIndex}`);
  } else if (e.type === 'step_finished') {
    steps[e.stepIndex] = e.step;
    inFlight = null;
    setPhase(`between:${e.stepIndex}`);
  } else {
    return;
  }
  render();
}

const events: EventSink = { params: { sink: 'web-example' }, deliver: onEvent };

/** Steps from the log, for a tab that is not driving; a log the reader refuses shows as failed. */
async function showLog(): Promise<void> {
  steps = [...readRunLog(await store.readLog(runId)).trajectory];
  render();
}

/** The store as the agent sees it; `acquire` shows "waiting" while another tab holds the run. */
function watchedStore(inner: IndexedDBStore): RunStore {
  return {
    runStarted: (id, rec) => inner.runStarted(id, rec),
    intent: (id, rec) => inner.intent(id, rec),
    resultAndIntent: (id, result, intent) => inner.resultAndIntent(id, result, intent),
    result: (id, resultId, rec) => inner.result(id, resultId, rec),
    callResult: (id, rec) => inner.callResult(id, rec),
    step: (id, rec) => inner.step(id, rec),
    inputRequest: (id, rec) => inner.inputRequest(id, rec),
    input: (id, rec) => inner.input(id, rec),
    readLog: (id) => inner.readLog(id),
    runEnded: (id, rec) => inner.runEnded(id, rec),
    async acquire(id, opts) {
      const timer = setTimeout(
        () => setState('waiting', 'Another tab is driving this run; watching its log until it lets go.'),
        150,
      );
      // Only a view of the other tab's progress: the driving call itself reports any failure.
      const poll = setInterval(() => void showLog().catch(() => undefined), 300);
      try {
        return await inner.acquire(id, opts);
      } finally {
        clearTimeout(timer);
        clearInterval(poll);
      }
    },
  };
}

const agent = demoAgent(watchedStore(store), events, pace, goal);
const world = {
  onLookup: () => {
    executions += 1;
  },
  sendEmail,
};
const request = demoRequest(runId, pace, world, goal);

function finish(result: RunResult): void {
  steps = [...result.trajectory];
  inFlight = null;
  render();
  view.answer.textContent = result.finalAnswer ?? `stopped: ${result.stopReason}`;
  setPhase('ended');
  const resumed = document.body.dataset['resumed'] === 'true' ? ', resumed in this tab after a reload' : '';
  setState('finished', `Finished (${result.stopReason}) after ${result.steps} steps${resumed}.`);
}

function hidePending(): void {
  shown = null;
  clearInterval(watch);
  view.pending.hidden = true;
  view.pending.replaceChildren();
}

const idsOf = (open: readonly InputRequest[]): string => open.map((p) => p.resultId).join(' ');

/**
 * Show the open requests (one panel each, in call order) and wait for the person. Another tab may
 * answer one first: while they are shown, the log is checked, and once they change this tab
 * follows the run.
 */
function showPending(open: readonly InputRequest[]): void {
  const pending = open[0];
  if (pending === undefined) return;
  hidePending();
  shown = idsOf(open);
  inFlight = null;
  render();
  renderRequests(view.pending, open, (reply) => void answer(reply));
  setState(
    'awaiting',
    pending.kind === 'settle'
      ? 'Waiting for you to settle what happened.'
      : 'Waiting for you. Reload or close the tab if you like: the question stays.',
  );
  setPhase(`${pending.kind}:${pending.stepIndex}`);
  watch = setInterval(() => {
    // A failed read is retried on the next tick; the click path reports real failures.
    void store
      .readLog(runId)
      .then((log) => {
        const now = readRunLog(log);
        if (shown !== null && idsOf(now.openRequests) !== shown) void drive('resume');
      })
      .catch(() => undefined);
  }, 1000);
}

async function answer(reply: InputReply): Promise<void> {
  hidePending();
  setState('running', 'Carrying out your reply.');
  await drive('resume', reply);
}

async function drive(mode: 'run' | 'resume', input?: InputReply): Promise<void> {
  hidePending();
  try {
    const result = mode === 'run' ? await run(agent, request) : await resume(agent, request, input ? { input } : {});
    // Several calls of one step may each wait for the person: the log has every open request.
    if (result.pending) showPending(readRunLog(await store.readLog(runId)).openRequests);
    else finish(result);
  } catch (e) {
    if (mode === 'run' && isPolyLoopError(e, 'run_exists')) return drive('resume');
    // Answered in another tab first: nothing was written; follow the run from its log.
    if (isPolyLoopError(e, 'invalid_input')) return drive('resume');
    setState('failed', e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  }
}

async function boot(): Promise<void> {
  view.runId.textContent = runId;
  view.start.addEventListener('click', () => void drive('run'));
  view.fresh.addEventListener('click', () => {
    location.search = `?run=weather-${Date.now().toString(36)}${goal === 'pair' ? '&goal=pair' : ''}`;
  });
  const log = await store.readLog(runId);
  const found = readRunLog(log);
  steps = [...found.trajectory];
  render();
  if (found.state === 'not_started')
    return setState('idle', 'No run yet. Start one, then reload the page whenever you like.');
  // The log is the source of truth: a request it holds is shown as is, without taking the run.
  if (found.pending) return showPending(found.openRequests);
  setState('running', `Reopened mid-run: resuming from step ${stepLabel(steps.length)}.`);
  await drive('resume');
}

/** What the end-to-end test reads. */
(globalThis as { polyloopExample?: unknown }).polyloopExample = {
  executions: () => executions,
  emails: () => outbox().filter((m) => m.runId === runId),
  trajectory: async () => readRunLog(await store.readLog(runId)).trajectory,
};

mountWorkerPanel();
boot().catch((e: unknown) => setState('failed', e instanceof Error ? `${e.name}: ${e.message}` : String(e)));
