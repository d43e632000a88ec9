/**
 * The ids a turn's chunks carry and the resultIds they come from: a call's tool part is known by
 * the resultId its action runs under (`s{i}.action` for a step's one call, `s{i}.a{j}` for call j
 * of several), and its input requests by that id with `.input` / `.settle`.
 * @module
 */

/** The resultId a step's one action runs under. */
export function actionKey(stepIndex: number): string {
  return `s${stepIndex}.action`;
}

/** The resultId call `j` of a step with several runs under. */
export function callKey(stepIndex: number, j: number): string {
  return `s${stepIndex}.a${j}`;
}

/**
 * The call an input request is about: `s{i}.a{j}` for `s{i}.a{j}.input`, the step's action for
 * `s{i}.input`; a sub-agent's request (`s{i}.c{n}`, `s{i}.a{j}.c{n}`) is about the call that runs it.
 */
export function callOfRequest(resultId: string): string {
  const call = resultId.replace(/\.(input|settle|c\d+)$/, '');
  return /\.a\d+$/.test(call) ? call : `${call}.action`;
}

/** The approval or answer request about a call (the inverse of {@link callOfRequest}). */
export function inputRequestOf(call: string): string {
  return `${call.replace(/\.action$/, '')}.input`;
}

/** A step's text part id. */
export function textId(stepIndex: number): string {
  return `s${stepIndex}.text`;
}

/** A step's reasoning part id. */
export function reasoningId(stepIndex: number): string {
  return `s${stepIndex}.reasoning`;
}

/** The approval id of an input request: unique in the chat (it names the turn's run). */
export function approvalIdOf(runId: string, resultId: string): string {
  return `${runId}:${resultId}`;
}

/** The id of a settlement's data part. */
export function settleIdOf(runId: string, resultId: string): string {
  return `${runId}:${resultId}`;
}
