// A person approves a waiting refund: resume by run id, with the reply.
import { resume } from 'polyloop';
import { agent } from './agent-b.mts';

const runId = process.argv[2] ?? 'refund-7';
const waiting = await resume(agent, runId); // awaiting input: the same result, nothing written
const result = await resume(agent, runId, { input: { kind: 'approve', resultId: waiting.pending!.resultId } });
console.log(result.stopReason, result.finalAnswer);
