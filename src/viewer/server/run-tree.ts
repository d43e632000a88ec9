/**
 * The tree of runs a sub-agent makes (docs/design/sub-agents.md), as the CLI and the viewer show
 * it: a child run's id is its parent's id and the parent's action (`p1.s0.action`, `p1.s2.a1`), so
 * a list of runs is put in tree order from the ids alone; and a request of kind `child` is shown as
 * what it really asks, in the run that asks it. Pure.
 * @module
 */
import type { InputRequest } from '../../core/index.ts';

/** A request as a log holds it or `pending` shows it. */
type Asked = Pick<InputRequest, 'kind' | 'target' | 'decision' | 'child'>;

/** What a request really asks, and in which run: a sub-agent's (`runId`), or the run's own (`runId` null). */
export type AskedIn<R extends Asked> = { readonly runId: string | null; readonly request: R | InputRequest };

/** Nesting deeper than a decoder accepts is never followed (a loop guard). */
const MAX_DEPTH = 64;

/**
 * The innermost request of `request` and the run that asks it: for kind `child`, the sub-agent's
 * own request (which may be a `child` one again), however deep; else the request itself.
 */
export function askedIn<R extends Asked>(request: R): AskedIn<R> {
  let runId: string | null = null;
  let r: R | InputRequest = request;
  for (let depth = 0; r.kind === 'child' && r.child !== undefined && depth < MAX_DEPTH; depth++) {
    runId = r.child.runId;
    r = r.child.request;
  }
  return { runId, request: r };
}

/**
 * The open request of a parent that waits on run `runId` (a child request naming it, at any depth):
 * a reply to `runId`'s request is given to that request of the parent, which carries it down. Null
 * when the parent waits on no request of `runId`.
 */
export function requestAwaiting(parentOpen: readonly InputRequest[], runId: string): InputRequest | null {
  const names = (r: InputRequest): boolean => {
    let c: InputRequest = r;
    for (let depth = 0; c.kind === 'child' && c.child !== undefined && depth < MAX_DEPTH; depth++) {
      if (c.child.runId === runId) return true;
      c = c.child.request;
    }
    return false;
  };
  return parentOpen.find(names) ?? null;
}

/** Where a reply to a sub-agent run's request goes: the topmost run waiting on it, and its request. */
export type ReplyRoute = { readonly runId: string; readonly resultId: string };

/**
 * The route of a reply to `runId`'s open request when `runId` is a sub-agent's run: up its
 * parents, as long as each waits on it, to the topmost one — the reply is that run's, and it is
 * carried down from there. Null when no parent waits on it (a run of its own: reply to it).
 * `openOf` gives a run's open requests, or null when there is no such run.
 */
export async function replyRoute(
  runId: string,
  openOf: (runId: string) => Promise<readonly InputRequest[] | null>,
): Promise<ReplyRoute | null> {
  let route: ReplyRoute | null = null;
  for (let id = parentIdOf(runId); id !== null; id = parentIdOf(id)) {
    const open = await openOf(id);
    const request = open === null ? null : requestAwaiting(open, runId);
    if (request === null) break;
    route = { runId: id, resultId: request.resultId };
  }
  return route;
}

const CHILD_ID = /^(.+)\.(s\d+\.(?:action|a\d+))$/;

/** The parent's run id a child run's id starts with (`p1.s0.action` → `p1`); null for an id of no such shape. */
export function parentIdOf(runId: string): string | null {
  return CHILD_ID.exec(runId)?.[1] ?? null;
}

/** A row of a run list in tree order: its depth (0: a root) and its parent's id when the parent is listed. */
export type TreeRow<T> = { readonly row: T; readonly depth: number; readonly parentRunId: string | null };

/**
 * `rows` in tree order: each run, then its sub-agent runs (in the order given), and theirs. A run
 * whose parent is not in the list (or that has no parent) is a root. The order of roots is kept.
 */
export function treeOrder<T>(rows: readonly T[], idOf: (row: T) => string | null): TreeRow<T>[] {
  const ids = new Set(rows.map(idOf).filter((id): id is string => id !== null));
  const parentOf = (row: T): string | null => {
    const id = idOf(row);
    const parent = id === null ? null : parentIdOf(id);
    return parent !== null && ids.has(parent) ? parent : null;
  };
  const children = new Map<string, T[]>();
  for (const row of rows) {
    const parent = parentOf(row);
    if (parent !== null) children.set(parent, [...(children.get(parent) ?? []), row]);
  }
  const out: TreeRow<T>[] = [];
  // A child's id is longer than its parent's, so the walk ends; it is iterative, so depth costs no stack.
  const stack: { row: T; depth: number }[] = rows
    .filter((r) => parentOf(r) === null)
    .reverse()
    .map((row) => ({ row, depth: 0 }));
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    out.push({ row: next.row, depth: next.depth, parentRunId: parentOf(next.row) });
    const id = idOf(next.row);
    const kids = id === null ? [] : (children.get(id) ?? []);
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ row: kids[i] as T, depth: next.depth + 1 });
  }
  return out;
}
