/**
 * The routes of a person in control of a run: `POST /runs/:id/stop` and `POST /runs/:id/fork`
 * (docs/http.md#post-runsidstop, docs/http.md#post-runsidfork). A stop is kept in the run's own
 * object; a fork is made from the source's object (only read) and imported into the new run's
 * object, which drives it on like an imported run.
 * @module
 */
import type { Context, Hono } from 'hono';
import { MAX_BODY_BYTES, readBody, readJsonBody } from './body.ts';
import { forkBodyProblem, stopBodyProblem } from './run-control.ts';
import type { ForkBody, ForkCreated, StopAnswer, StopBody } from '../core/internal-entry.ts';
import type { ForkSource, StopOutcome } from './run-control.ts';
import { RUN_ID_PATTERN } from './run-id.ts';
import type { StartOutcome } from './run-setup.ts';

/** The run object's methods these routes call (over RPC). */
export type ControlRpc = {
  requestStop(reason: string | undefined): Promise<StopOutcome>;
  forkSource(fork: ForkBody): Promise<ForkSource>;
  adopt(runId: string, input: unknown, log: string): Promise<StartOutcome>;
};

type Code = 'bad_request' | 'payload_too_large' | 'not_found' | 'conflict';

/** What the app lends these routes: its run objects, its error answer, its 404 of an unknown run. */
export type ControlRouteParts<Env extends object> = {
  readonly stubFor: (c: Context<{ Bindings: Env }>, runId: string) => ControlRpc;
  readonly fail: (c: Context, status: 400 | 404 | 409 | 413, code: Code, message: string) => Response;
  readonly unknownRun: (c: Context, runId: string) => Response;
};

/**
 * The body of a stop: size, UTF-8, JSON and shape checks, in that order. No body (or an empty
 * one) is a stop without a reason: `curl -X POST …/stop` works.
 */
async function readStopBody(c: Context, fail: ControlRouteParts<object>['fail']): Promise<Response | StopBody> {
  if (c.req.raw.body === null) return {};
  let text: string | null;
  try {
    text = await readBody(c.req.raw, MAX_BODY_BYTES);
  } catch {
    return fail(c, 400, 'bad_request', 'request body is not valid UTF-8');
  }
  if (text === null) return fail(c, 413, 'payload_too_large', `request body exceeds ${MAX_BODY_BYTES} bytes`);
  if (text.trim() === '') return {};
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return fail(c, 400, 'bad_request', 'request body is not valid JSON');
  }
  const problem = stopBodyProblem(raw);
  return problem === null ? (raw as StopBody) : fail(c, 400, 'bad_request', problem);
}

async function readForkBody(c: Context, fail: ControlRouteParts<object>['fail']): Promise<Response | ForkBody> {
  const body = await readJsonBody(c.req.raw);
  if ('status' in body) return fail(c, body.status, body.code, body.message);
  const problem = forkBodyProblem(body.raw);
  return problem === null ? (body.raw as ForkBody) : fail(c, 400, 'bad_request', problem);
}

/** Add `POST /runs/:id/stop` and `POST /runs/:id/fork` to `app`. */
export function controlRoutes<Env extends object>(app: Hono<{ Bindings: Env }>, parts: ControlRouteParts<Env>): void {
  const { stubFor, fail, unknownRun } = parts;

  app.post('/runs/:id/stop', async (c) => {
    const runId = c.req.param('id');
    const body = await readStopBody(c, fail);
    if (body instanceof Response) return body;
    const outcome = RUN_ID_PATTERN.test(runId) ? await stubFor(c, runId).requestStop(body.reason) : null;
    if (outcome === null || (!outcome.ok && outcome.code === 'not_found')) return unknownRun(c, runId);
    if (!outcome.ok)
      return outcome.code === 'conflict'
        ? fail(c, 409, 'conflict', outcome.message)
        : fail(c, 400, 'bad_request', outcome.message);
    if (!outcome.requested) {
      const { stopReason, message } = outcome;
      return c.json<StopAnswer>({ runId, requested: false, stopReason, message }, 200);
    }
    return c.json<StopAnswer>({ runId, requested: true, stopRequest: outcome.stopRequest }, 202);
  });

  app.post('/runs/:id/fork', async (c) => {
    const runId = c.req.param('id');
    const body = await readForkBody(c, fail);
    if (body instanceof Response) return body;
    const source = RUN_ID_PATTERN.test(runId) ? await stubFor(c, runId).forkSource(body) : null;
    if (source === null || (!source.ok && source.code === 'not_found')) return unknownRun(c, runId);
    if (!source.ok) return fail(c, 409, 'conflict', source.message);
    const { newRunId, atStep } = body;
    const made = await stubFor(c, newRunId).adopt(newRunId, source.input, source.log);
    if (!made.ok) {
      // A refusal of the new run's object is about the state of things, not the request: the fork's
      // id is taken, or this deployment's agent would not resume the source's run as it stands.
      const why = made.code === 'conflict' ? made.message : `the fork was refused: ${made.message}`;
      return fail(c, 409, 'conflict', why);
    }
    const url = `/runs/${newRunId}`;
    const created: ForkCreated = { runId: newRunId, url, forkedFrom: { runId, atStep } };
    return c.json<ForkCreated>(created, 201, { Location: url });
  });
}
