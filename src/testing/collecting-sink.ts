/**
 * An event sink that keeps what it is given.
 * @module
 */
import type { EventSink, RunEvent } from '../core/index.ts';

/** An {@link EventSink} that keeps every event. */
export type CollectingSink = EventSink & { readonly events: RunEvent[] };

/** Collect events in memory; `failOn` makes delivery of those event types throw (to test counting). */
export function collectingSink(opts: { readonly failOn?: readonly RunEvent['type'][] } = {}): CollectingSink {
  const events: RunEvent[] = [];
  const failOn = new Set(opts.failOn ?? []);
  return {
    params: Object.freeze({ sink: 'collecting' }),
    events,
    deliver(event: RunEvent): void {
      events.push(event);
      if (failOn.has(event.type)) throw new Error(`sink refuses ${event.type}`);
    },
  };
}
