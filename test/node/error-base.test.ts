/**
 * One error base: every error the package throws — core, adapters, zod, the Workers store, the
 * test kit, the `polyloop` command and its viewer — is a `PolyLoopError` whose code
 * `isPolyLoopError` knows, with the name, message and fields it always had (docs/api.md#errors).
 */
import { describe, expect, it } from 'vitest';
import { AiSdkResponseTooLargeError, AiSdkStreamError } from '../../src/adapters/ai-sdk-stream.ts';
import { ModelCallError } from '../../src/adapters/http.ts';
import { isPolyLoopError, PolyLoopError } from '../../src/core/index.ts';
import type { PolyLoopErrorCode } from '../../src/core/index.ts';
import { MissingDirectoryError } from '../../src/platform-node/store-dir.ts';
import { NotRegularFileError } from '../../src/platform-node/regular-file.ts';
import { ViewerRefusedError } from '../../src/viewer/server/view-source.ts';
import { WorkerUnreachableError } from '../../src/viewer/server/view-worker.ts';
import { ContractViolationError, SimulatedCrashError } from '../../src/testing/index.ts';
import { ToolArgumentsError } from '../../src/zod/index.ts';

type Case = {
  readonly error: Error;
  readonly name: string;
  readonly code: PolyLoopErrorCode;
  readonly message: string;
};

const cause = new Error('the cause');

const cases: readonly Case[] = [
  {
    error: new AiSdkStreamError('the stream broke', { cause }),
    name: 'AiSdkStreamError',
    code: 'model_call',
    message: 'the stream broke',
  },
  {
    error: new SimulatedCrashError('crash before step'),
    name: 'SimulatedCrashError',
    code: 'store_error',
    message: 'crash before step',
  },
  {
    error: new ContractViolationError('the seam broke it'),
    name: 'ContractViolationError',
    code: 'contract_violation',
    message: 'the seam broke it',
  },
  {
    error: new ViewerRefusedError('not on 0.0.0.0'),
    name: 'ViewerRefusedError',
    code: 'viewer_refused',
    message: 'not on 0.0.0.0',
  },
  {
    error: new WorkerUnreachableError('401'),
    name: 'WorkerUnreachableError',
    code: 'worker_unreachable',
    message: '401',
  },
  {
    error: new MissingDirectoryError('no such directory: x'),
    name: 'MissingDirectoryError',
    code: 'missing_directory',
    message: 'no such directory: x',
  },
  {
    error: new NotRegularFileError('/runs/a.ndjson', 'FIFO'),
    name: 'NotRegularFileError',
    code: 'store_error',
    message:
      'refusing /runs/a.ndjson: it is a FIFO, not a regular file (the store never follows a link or opens a special file at a log or lock path; remove it if it is not yours)',
  },
  {
    error: new ToolArgumentsError('t', 'bad'),
    name: 'ToolArgumentsError',
    code: 'tool_arguments',
    message: 'arguments of "t" are invalid: bad',
  },
  {
    error: new AiSdkResponseTooLargeError(10),
    name: 'AiSdkResponseTooLargeError',
    code: 'model_call',
    message: 'aiSdkModel: the reply is larger than 10 bytes of text, reasoning and tool input (maxResponseBytes)',
  },
  {
    error: new ModelCallError('down', {
      provider: 'openai',
      kind: 'network',
      status: null,
      errorType: null,
      requestId: null,
    }),
    name: 'ModelCallError',
    code: 'model_call',
    message: 'openai: down',
  },
];

describe('one error base', () => {
  it.each(cases)('$name is a PolyLoopError with code $code that isPolyLoopError recognises', ({ error, code }) => {
    expect(error).toBeInstanceOf(PolyLoopError);
    expect(isPolyLoopError(error)).toBe(true);
    expect(isPolyLoopError(error, code)).toBe(true);
  });

  it.each(cases)('$name keeps its name and message', ({ error, name, message }) => {
    expect(error.name).toBe(name);
    expect(error.message).toBe(message);
  });

  it('a copy from another realm is recognised by its name and code alone', () => {
    for (const { name, code } of cases) expect(isPolyLoopError({ name, code, message: '' }, code)).toBe(true);
  });

  it('keeps the fields each error had', () => {
    const violation = new ContractViolationError('differs', { actual: 1, expected: 2, cause });
    expect([violation.actual, violation.expected, violation.showDiff, violation.cause]).toEqual([1, 2, true, cause]);
    const planted = new NotRegularFileError('/p', 'symbolic link');
    expect([planted.path, planted.found]).toEqual(['/p', 'symbolic link']);
    expect(new AiSdkStreamError('x', { cause }).cause).toBe(cause);
  });
});
