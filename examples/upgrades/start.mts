// Version A starts two refunds; each stops at its approval and waits (nothing held in memory).
import { run } from 'polyloop';
import { agent } from './agent-a.mts';

for (const [runId, order] of [['refund-7', 'A-7'], ['refund-8', 'B-8']] as const) {
  const result = await run(agent, { runId, goal: `Refund order ${order}.` });
  console.log(runId, result.stopReason, result.pending?.resultId, result.pending?.decision?.trajectoryRepr);
}
