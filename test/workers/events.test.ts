import { describe, expect, it } from 'vitest';
import { decodeRecord } from '../../src/core/index.ts';
import { call, readEvents, startRun, waitFor } from './http.ts';
import type { SseEvent } from './http.ts';

const GOAL = { goal: 'one two three four five', pauseMs: 40 };

describe('GET /runs/:id/events in workerd', () => {
  it('streams the run log live, one event per record with id = record sequence, and closes after run_ended', async () => {
    const runId = await startRun(GOAL);
    const res = await call(`/runs/${runId}/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readEvents(res);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i));
    expect(events[0]?.event).toBe('run_started');
    expect(events.at(-1)?.event).toBe('run_ended');
    for (const e of events) expect(decodeRecord(e.data).kind).toBe(e.event);
    const done = await waitFor(runId, (s) => s.status === 'ended');
    expect(events.filter((e) => e.event === 'step')).toHaveLength(done.steps);
  });

  it('gives a reconnecting client (Last-Event-ID) every event it missed, each exactly once', async () => {
    const runId = await startRun(GOAL);
    const seen: SseEvent[] = [];
    let last: number | null = null;
    // Drop the connection after every 3 events until the run has ended.
    for (let round = 0; round < 50; round++) {
      const headers: Record<string, string> = last === null ? {} : { 'last-event-id': String(last) };
      const batch = await readEvents(await call(`/runs/${runId}/events`, { headers }), 3);
      seen.push(...batch);
      if (batch.length > 0) last = batch[batch.length - 1]!.id;
      if (batch.some((e) => e.event === 'run_ended')) break;
    }
    expect(seen.at(-1)?.event).toBe('run_ended');
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(ids.map((_, i) => i));
    const replay = await readEvents(await call(`/runs/${runId}/events`));
    expect(replay).toEqual(seen);
  });

  it('replays only what follows Last-Event-ID on an ended run, and rejects a malformed one', async () => {
    const runId = await startRun('a b');
    await waitFor(runId, (s) => s.status === 'ended');
    const all = await readEvents(await call(`/runs/${runId}/events`));
    const tail = await readEvents(await call(`/runs/${runId}/events`, { headers: { 'last-event-id': '2' } }));
    expect(tail).toEqual(all.slice(3));
    const bad = await call(`/runs/${runId}/events`, { headers: { 'last-event-id': 'abc' } });
    expect(bad.status).toBe(400);
  });
});

describe('GET /runs/:id/events with a Last-Event-ID at or past the end of the log', () => {
  it('answers 204 (nothing more, do not reconnect) to a client that has already seen run_ended', async () => {
    const runId = await startRun('a b');
    await waitFor(runId, (s) => s.status === 'ended');
    const all = await readEvents(await call(`/runs/${runId}/events`));
    const lastId = all.at(-1)!.id;
    const res = await call(`/runs/${runId}/events`, { headers: { 'last-event-id': String(lastId) } });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
  });

  it('answers 400 to a Last-Event-ID beyond the last stored record, on an ended and on a running run', async () => {
    const ended = await startRun('a b');
    await waitFor(ended, (s) => s.status === 'ended');
    const all = await readEvents(await call(`/runs/${ended}/events`));
    const beyond = await call(`/runs/${ended}/events`, { headers: { 'last-event-id': String(all.at(-1)!.id + 1) } });
    expect(beyond.status).toBe(400);
    expect(((await beyond.json()) as { error: { code: string } }).error.code).toBe('bad_request');
    const running = await startRun({ goal: 'slow words here', pauseMs: 300 });
    const early = await call(`/runs/${running}/events`, { headers: { 'last-event-id': '999' } });
    expect(early.status).toBe(400);
    await early.body?.cancel();
    await call(`/runs/${running}/cancel`, { method: 'POST' });
    await waitFor(running, (s) => s.status === 'ended');
  });
});
