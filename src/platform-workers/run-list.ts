/**
 * The query of `GET /runs` (`?limit=&cursor=`), checked: a pure function of the URL's parameters.
 * @module
 */
import type { RunListQuery } from './run-index.ts';

/** Default and largest page size of `GET /runs`. */
export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 100;

/** True for a cursor the run index hands out (the ordinal of the last run of a page, in decimal). */
export function isRunListCursor(cursor: string): boolean {
  return /^[1-9]\d{0,14}$/.test(cursor);
}

/**
 * The page `params` ask for, or why they are refused: `limit` an
 * integer 1–100 (default 50), `cursor` one `GET /runs` handed out.
 */
export function listQuery(params: URLSearchParams): RunListQuery | string {
  const unknown = [...new Set(params.keys())].filter((k) => k !== 'limit' && k !== 'cursor');
  if (unknown.length > 0) return `unknown query parameter(s): ${unknown.join(', ')}`;
  if (params.getAll('limit').length > 1 || params.getAll('cursor').length > 1)
    return 'limit and cursor may be given once each';
  const limitText = params.get('limit');
  const limit = limitText === null ? DEFAULT_LIST_LIMIT : /^\d{1,4}$/.test(limitText) ? Number(limitText) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIST_LIMIT)) return `limit must be an integer from 1 to ${MAX_LIST_LIMIT}`;
  const cursor = params.get('cursor');
  if (cursor !== null && !isRunListCursor(cursor)) return 'cursor must be a nextCursor that GET /runs returned';
  return { limit, cursor };
}
