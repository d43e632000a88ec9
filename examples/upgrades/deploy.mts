// Version B is deployed: every run named on the command line goes on under it, with a reason on record.
import { resume, RunIdentityMismatchError } from 'polyloop';
import { agent } from './agent-b.mts';

const reason = 'deploy B: lookup_order tool; the system prompt asks to look orders up first';
for (const runId of process.argv.slice(2)) {
  try {
    await resume(agent, runId); // a run this version started: it still waits, nothing is written
  } catch (e) {
    if (!(e instanceof RunIdentityMismatchError) || e.ended) throw e;
    console.log(e.message);
    const result = await resume(agent, runId, { upgrade: { reason } });
    console.log(runId, 'upgraded:', result.stopReason, result.pending?.resultId);
  }
}
