/**
 * The page's second panel: a run hosted by the PolyLoop Worker, followed live next to the run in
 * this tab. The Worker address (default `/worker`, which the Vite dev server proxies to
 * `npm run dev`'s Worker), the bearer token and the run id are entered on the page and kept for
 * this tab's session (`sessionStorage`), so a reload follows the same run again.
 * The panel reports where it is in `#worker[data-state]`: `idle | following | awaiting | ended | failed`.
 */
import type { InputReply, RunLogView } from '../../src/core/index.ts';
import { renderRequests } from './pending.ts';
import { runningItem, stepItem, stepLabel } from './steps.ts';
import { answerWorkerRun, followWorkerRun, startWorkerRun } from './worker-run.ts';
import type { WorkerTarget } from './worker-run.ts';

type PanelState = 'idle' | 'following' | 'awaiting' | 'ended' | 'failed';

const KEY = 'polyloop-web-example-worker';
const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

/** What the in-flight step is doing, from the log: the announced action, or the model call. */
function inFlightText(view: RunLogView): string {
  const action = view.inFlight?.actionIntent?.decision.action;
  if (action?.kind === 'tool_call') return `${action.name}(${JSON.stringify(action.arguments)})`;
  return action ? 'code' : 'thinking…';
}

/** Wire the panel's controls; follows the remembered run at once when there is one. */
export function mountWorkerPanel(): void {
  const el = {
    panel: $('worker'),
    url: $<HTMLInputElement>('worker-url'),
    token: $<HTMLInputElement>('worker-token'),
    run: $<HTMLInputElement>('worker-run'),
    goal: $<HTMLInputElement>('worker-goal'),
    ask: $<HTMLInputElement>('worker-ask'),
    follow: $<HTMLButtonElement>('worker-follow'),
    start: $<HTMLButtonElement>('worker-start'),
    state: $('worker-state'),
    banner: $('worker-banner'),
    steps: $<HTMLOListElement>('worker-steps'),
    pending: $('worker-pending'),
    answer: $('worker-answer'),
  };
  let following: AbortController | null = null;

  const saved = JSON.parse(sessionStorage.getItem(KEY) ?? '{}') as { url?: string; token?: string; run?: string };
  el.url.value = saved.url ?? '/worker';
  el.token.value = saved.token ?? '';
  el.run.value = saved.run ?? '';
  const target = (): WorkerTarget => ({ baseURL: el.url.value.trim(), token: el.token.value.trim() });
  const remember = (): void =>
    sessionStorage.setItem(KEY, JSON.stringify({ url: el.url.value, token: el.token.value, run: el.run.value }));

  function setState(state: PanelState, banner: string): void {
    el.panel.dataset['state'] = state;
    el.state.textContent = state;
    el.state.className = `pill ${state === 'following' ? 'running' : state === 'ended' ? 'finished' : state}`;
    el.banner.textContent = banner;
  }

  function show(view: RunLogView, runId: string): void {
    const items = view.trajectory.map(stepItem);
    if (view.inFlight && view.state === 'in_flight')
      items.push(runningItem(view.inFlight.stepIndex, inFlightText(view)));
    el.steps.replaceChildren(...items);
    el.answer.textContent = view.ended ? (view.ended.finalAnswer ?? `stopped: ${view.ended.stopReason}`) : '';
    const p = view.pending;
    if (p === null) {
      el.pending.hidden = true;
      el.pending.replaceChildren();
      delete el.pending.dataset['resultId'];
    } else if (el.pending.dataset['resultId'] !== view.openRequests.map((o) => o.resultId).join(' ')) {
      // Drawn once per set of requests: a redraw on every record would wipe what the person is typing.
      el.pending.dataset['resultId'] = view.openRequests.map((o) => o.resultId).join(' ');
      renderRequests(el.pending, view.openRequests, (reply) => void sendReply(runId, reply), 'worker-');
    }
    if (view.state === 'ended')
      setState('ended', `Ended (${view.ended?.stopReason ?? '?'}) after ${view.steps} steps on the Worker.`);
    else if (p) setState('awaiting', `The run on the Worker waits for you at step ${stepLabel(p.stepIndex)}.`);
    else setState('following', `Following run ${runId} on the Worker: ${view.steps} steps so far.`);
  }

  async function sendReply(runId: string, reply: InputReply): Promise<void> {
    el.pending.hidden = true;
    try {
      await answerWorkerRun(target(), runId, reply);
    } catch (e) {
      setState('failed', e instanceof Error ? e.message : String(e));
    }
  }

  async function follow(runId: string): Promise<void> {
    following?.abort();
    const controller = new AbortController();
    following = controller;
    el.run.value = runId;
    remember();
    el.steps.replaceChildren();
    setState('following', `Connecting to run ${runId} on the Worker…`);
    try {
      await followWorkerRun(target(), runId, { signal: controller.signal, onView: (view) => show(view, runId) });
    } catch (e) {
      if (controller.signal.aborted) return;
      setState('failed', e instanceof Error ? e.message : String(e));
    }
  }

  el.follow.addEventListener('click', () => void follow(el.run.value.trim()));
  el.start.addEventListener('click', () => {
    remember();
    const input = { goal: el.goal.value, pauseMs: 400, approve: el.ask.checked };
    startWorkerRun(target(), input).then(
      (runId) => void follow(runId),
      (e: unknown) => setState('failed', e instanceof Error ? e.message : String(e)),
    );
  });
  setState('idle', 'Start a run on the Worker, or follow one by its id.');
  if (el.run.value !== '' && el.token.value !== '') void follow(el.run.value);
}
