/**
 * An event sink that keeps what it is given.
 * @module
 */
import { checkOptionKeys } from '../core/internal-entry.ts';
import type { EventSink, RunEvent } from '../core/index.ts';
import type { OptionKeys } from '../core/internal-entry.ts';

/** An {@link EventSink} that keeps every event. */
export type CollectingSink = EventSink & { readonly events: RunEvent[] };

/** Options of {@link collectingSink}. */
type CollectingSinkOptions = { readonly failOn?: readonly RunEvent['type'][] };
const KNOWN: OptionKeys<CollectingSinkOptions> = { failOn: true };

/** Collect events in memory; `failOn` makes delivery of those event types throw (to test counting). */
export function collectingSink(opts: CollectingSinkOptions = {}): CollectingSink {
  checkOptionKeys(opts, KNOWN, 'collectingSink');
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
