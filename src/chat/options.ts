/**
 * The options bags of `polyloop/chat`: unknown keys are refused (a misspelt option would
 * otherwise vanish with the behaviour it asked for), required ones checked.
 * @module
 */
import { InvalidRequestError } from '../core/index.ts';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Throws `InvalidRequestError` naming every unknown key of `options` and every missing or
 * malformed one of `agent`, `store`, `request`; `where` names the function.
 */
export function checkChatOptions(options: unknown, known: readonly string[], where: string): void {
  if (!isRecord(options)) throw new InvalidRequestError('needs an options object', { source: where });
  const problems: { path: string; message: string }[] = [];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) problems.push({ path: key, message: `is not an option of ${where} (known: ${known.join(', ')})` });
  }
  const agent = options['agent'];
  if (!isRecord(agent) || !isRecord(agent['model']) || !isRecord(agent['params'])) problems.push({ path: 'agent', message: 'must be an agent from defineAgent' });
  const store = options['store'];
  if (!isRecord(store) || typeof store['readLog'] !== 'function') problems.push({ path: 'store', message: 'must be a RunStore' });
  if (typeof options['request'] !== 'function') problems.push({ path: 'request', message: 'must be a function building a turn\'s RunRequest' });
  for (const key of ['waitUntil'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'function') problems.push({ path: key, message: 'must be a function' });
  }
  if (options['maxBodyBytes'] !== undefined && !(Number.isSafeInteger(options['maxBodyBytes']) && (options['maxBodyBytes'] as number) > 0)) {
    problems.push({ path: 'maxBodyBytes', message: 'must be a positive integer' });
  }
  if (problems.length > 0) throw new InvalidRequestError(problems, { subject: 'options', source: where });
}
