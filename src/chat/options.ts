/**
 * The options bags of `polyloop/chat`: unknown keys are refused by the core's checker (a
 * misspelt option would otherwise vanish with the behaviour it asked for), required ones here.
 * @module
 */
import { InvalidRequestError } from '../core/index.ts';
import { checkOptionKeys } from '../core/internal-entry.ts';
import type { OptionKeys } from '../core/internal-entry.ts';
import type { ChatEngineOptions, ChatHandlerOptions, LocalChatTransportOptions } from './types.ts';

/** The keys of each bag: the compiler refuses a list that misses an option or names one the type lacks. */
export const CHAT_ENGINE_KEYS: OptionKeys<ChatEngineOptions> = {
  agent: true,
  store: true,
  request: true,
  waitUntil: true,
};
export const CHAT_HANDLER_KEYS: OptionKeys<ChatHandlerOptions> = { ...CHAT_ENGINE_KEYS, maxBodyBytes: true };
export const LOCAL_TRANSPORT_KEYS: OptionKeys<LocalChatTransportOptions> = { agent: true, store: true, request: true };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Throws `InvalidRequestError` for an unknown key of `options` (naming the nearest known one),
 * and for every missing or malformed `agent`, `store`, `request`, `waitUntil`, `maxBodyBytes`.
 */
export function checkChatOptions(options: unknown, known: Readonly<Record<string, true>>, where: string): void {
  checkOptionKeys(options, known, where);
  const o = options as Record<string, unknown>;
  const problems: { path: string; message: string }[] = [];
  const add = (path: string, message: string): void => void problems.push({ path, message });
  const agent = o['agent'];
  const agentLike = isRecord(agent) && isRecord(agent['model']) && isRecord(agent['params']);
  if (!agentLike) add('agent', 'must be an agent from defineAgent');
  if (!isRecord(o['store']) || typeof o['store']['readLog'] !== 'function') add('store', 'must be a RunStore');
  if (typeof o['request'] !== 'function') add('request', "must be a function building a turn's RunRequest");
  if (o['waitUntil'] !== undefined && typeof o['waitUntil'] !== 'function') add('waitUntil', 'must be a function');
  const max = o['maxBodyBytes'];
  const positive = typeof max === 'number' && Number.isSafeInteger(max) && max > 0;
  if (max !== undefined && !positive) add('maxBodyBytes', 'must be a positive integer');
  if (problems.length > 0) throw new InvalidRequestError(problems, { subject: 'options', source: where });
}
