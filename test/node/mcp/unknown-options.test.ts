/** mcpTools and connectMcp refuse an option they do not know, before connecting, naming it and the option it most likely meant. */
import { describe, expect, it } from 'vitest';
import { connectMcp, mcpTools } from '../../../src/mcp/index.ts';
import { expectUnknownOption, refusalOf } from '../../contract/unknown-option.ts';

/** A fetch that fails the test if anything is sent. */
const untouched = (): Promise<Response> => Promise.reject(new Error('the server was contacted'));
const base = { url: 'http://127.0.0.1:9/mcp', fetch: untouched };

describe('MCP options', () => {
  it.each<[string, () => unknown, string, string]>([
    ['mcpTools', () => mcpTools({ ...base, needsAproval: true } as never), 'needsAproval', 'needsApproval'],
    ['connectMcp', () => connectMcp({ ...base, trusted: true } as never), 'trusted', 'trust'],
    ['connectMcp', () => connectMcp({ ...base, timeout: 5 } as never), 'timeout', 'timeoutMs'],
    [
      'a tool override',
      () => mcpTools({ ...base, tools: { delete_file: { needsAproval: true } } } as never),
      'needsAproval',
      'needsApproval',
    ],
  ])('%s refuses a misspelt key', async (_fn, build, key, meant) => {
    await expectUnknownOption(build, key, meant);
  });

  it('names the tool of a misspelt override', async () => {
    expect(
      await refusalOf(() => mcpTools({ ...base, tools: { delete_file: { replay: 'never' } } } as never)),
    ).toContain('replay is not an option of mcpTools tools["delete_file"]; did you mean `replayPolicy`?');
  });

  it('refuses options that are not an object', async () => {
    expect(await refusalOf(() => mcpTools(null as never))).toBe('mcpTools needs an options object, got null');
  });
});
