// Two versions that may not take over a run waiting for approval of a refund: one without the
// `refund` tool, one where it became replay-safe. Each is refused, and nothing is written.
import { defineAgent, resume, ToolRegistry, UpgradeRefusedError } from 'polyloop';
import type { ToolSpec } from 'polyloop';
import { agent as b } from './agent-b.mts';
import { refund } from './shared.mts';

const { model, interpreter, store, events, syntheticObservations, defaults } = b;
const versions: Record<string, readonly ToolSpec[]> = {
  'refund renamed to refund_card': [{ ...refund, name: 'refund_card' }],
  'refund made replay-safe': [{ ...refund, replayPolicy: 'safe' }],
};
for (const [change, specs] of Object.entries(versions)) {
  const tools = ToolRegistry.of(specs);
  const c = defineAgent({ model, interpreter, store, events, syntheticObservations, defaults: { ...defaults, tools, executor: tools.executor() } });
  try {
    await resume(c, process.argv[2] ?? 'refund-8', { upgrade: { reason: change } });
  } catch (e) {
    if (!(e instanceof UpgradeRefusedError)) throw e;
    console.log(`${change}: ${e.code} (${e.tool}) ${e.message}`);
  }
}
