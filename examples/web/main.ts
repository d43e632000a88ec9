/**
 * The web example: an agent that runs in this tab, writes every step to IndexedDB, and carries
 * on after a reload. Open it in two tabs: one drives the run, the other waits and watches.
 * Query parameters: `run` (run id), `think` and `tool` (milliseconds each model call / tool takes).
 */
import { isPolyLoopError, resume, run } from '../../src/core/index.ts';
import type { EventSink, LogRecord, RunEvent, RunResult, RunStore, StepRecord } from '../../src/core/index.ts';
import { IndexedDBStore } from '../../src/platform-web/index.ts';
import { demoAgent, demoRequest } from './agent.ts';

type State = 'idle' | 'waiting' | 'running' | 'finished' | 'failed';

const query = new URLSearchParams(location.search);
const runId = query.get('run') ?? 'weather-demo';
const pace = { thinkMs: Number(query.get('think') ?? 500), toolMs: Number(query.get('tool') ?? 900) };
const store = new IndexedDBStore({ dbName: 'polyloop-web-example' });

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const view = { state: $('state'), banner: $('banner'), steps: $<HTMLOListElement>('steps'), answer: $('answer'), start: $<HTMLButtonElement>('start'), fresh: $<HTMLButtonElement>('fresh'), runId: $('run-id'), driver: $('driver') };

let steps: StepRecord[] = [];
let inFlight: { readonly stepIndex: number; readonly text: string } | null = null;
let executions = 0;

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

function stepItem(step: StepRecord): HTMLLIElement {
  const li = document.createElement('li');
  li.className = 'step done';
  const what = step.decision === 'final' ? `answer: ${step.finalAnswer ?? ''}` : (step.actionRepr ?? step.decision);
  li.innerHTML = '<span class="what"></span><span class="obs"></span><span class="pill ok">done</span>';
  (li.children[0] as HTMLElement).textContent = what;
  (li.children[1] as HTMLElement).textContent = step.observation ?? step.explanation ?? '';
  return li;
}

function render(): void {
  const items = steps.map(stepItem);
  if (inFlight) {
    const li = document.createElement('li');
    li.className = 'step running';
    li.innerHTML = '<span class="what"></span><span class="obs">…</span><span class="pill running">running</span>';
    (li.children[0] as HTMLElement).textContent = inFlight.text;
    items.push(li);
  }
  view.steps.replaceChildren(...items);
  view.driver.textContent = `actions executed by this tab: ${executions}`;
}

function stepsOf(log: readonly LogRecord[]): StepRecord[] {
  return log.flatMap((r) => (r.kind === 'step' ? [r.step] : []));
}

function onEvent(e: RunEvent): void {
  if (e.type === 'run_started') {
    setState('running', e.resumed ? `Resumed after reopening — continuing from step ${e.fromStep + 1}.` : 'Running in this tab.');
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

/** The store as the agent sees it; `acquire` shows "waiting" while another tab holds the run. */
function watchedStore(inner: IndexedDBStore): RunStore {
  return {
    runStarted: (id, rec) => inner.runStarted(id, rec),
    intent: (id, rec) => inner.intent(id, rec),
    result: (id, resultId, rec) => inner.result(id, resultId, rec),
    step: (id, rec) => inner.step(id, rec),
    readLog: (id) => inner.readLog(id),
    runEnded: (id, rec) => inner.runEnded(id, rec),
    async acquire(id, opts) {
      const timer = setTimeout(() => setState('waiting', 'Another tab is driving this run; watching its log until it lets go.'), 150);
      const poll = setInterval(() => void inner.readLog(id).then((log) => ((steps = stepsOf(log)), render())), 300);
      try {
        return await inner.acquire(id, opts);
      } finally {
        clearTimeout(timer);
        clearInterval(poll);
      }
    },
  };
}

const agent = demoAgent(watchedStore(store), events, pace);
const request = demoRequest(runId, pace, () => {
  executions += 1;
});

function finish(result: RunResult): void {
  steps = [...result.trajectory];
  inFlight = null;
  render();
  view.answer.textContent = result.finalAnswer ?? `stopped: ${result.stopReason}`;
  setPhase('ended');
  const resumed = document.body.dataset['resumed'] === 'true' ? ', resumed in this tab after a reload' : '';
  setState('finished', `Finished (${result.stopReason}) after ${result.steps} steps${resumed}.`);
}

async function drive(mode: 'run' | 'resume'): Promise<void> {
  try {
    finish(await (mode === 'run' ? run : resume)(agent, request));
  } catch (e) {
    if (mode === 'run' && isPolyLoopError(e, 'run_exists')) return drive('resume');
    setState('failed', e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  }
}

async function boot(): Promise<void> {
  view.runId.textContent = runId;
  view.start.addEventListener('click', () => void drive('run'));
  view.fresh.addEventListener('click', () => {
    location.search = `?run=weather-${Date.now().toString(36)}`;
  });
  const log = await store.readLog(runId);
  steps = stepsOf(log);
  render();
  if (log.length === 0) return setState('idle', 'No run yet. Start one, then reload the page whenever you like.');
  setState('running', `Reopened mid-run: resuming from step ${steps.length + 1}.`);
  await drive('resume');
}

/** What the end-to-end test reads. */
(globalThis as { polyloopExample?: unknown }).polyloopExample = {
  executions: () => executions,
  trajectory: async () => stepsOf(await store.readLog(runId)),
};

void boot();
