/**
 * The demo's tools: read-only views of the repository (`list_dir`, `read_file`), both `safe`
 * to replay. Paths are relative to the repository root and may not leave it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ToolRegistry } from '../../src/core/index.ts';
import type { JsonObject } from '../../src/core/index.ts';

const MAX_FILE_CHARS = 60_000;

function inside(root: string, path: unknown): string {
  if (typeof path !== 'string' || path === '' || isAbsolute(path)) throw new Error(`path must be a relative path inside the repository, got ${JSON.stringify(path)}`);
  const full = resolve(root, path);
  const rel = relative(root, full);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new Error(`path ${JSON.stringify(path)} leaves the repository`);
  return full;
}

const pathParam: JsonObject = {
  type: 'object',
  properties: { path: { type: 'string', description: 'Relative to the repository root, e.g. "src/core".' } },
  required: ['path'],
  additionalProperties: false,
};

/** `list_dir` and `read_file` over `root`. */
export function repoTools(root: string): ToolRegistry {
  return ToolRegistry.of([
    {
      name: 'list_dir',
      description: 'List a directory of the repository: one entry per line, directories end with "/".',
      parameters: pathParam,
      replayPolicy: 'safe',
      handler: async (args) => {
        const entries = await readdir(inside(root, args['path']), { withFileTypes: true });
        return entries
          .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
          .sort()
          .join('\n');
      },
    },
    {
      name: 'read_file',
      description: `Read a text file of the repository (at most ${MAX_FILE_CHARS} characters).`,
      parameters: pathParam,
      replayPolicy: 'safe',
      handler: async (args) => {
        const text = await readFile(inside(root, args['path']), 'utf8');
        return text.length <= MAX_FILE_CHARS ? text : `${text.slice(0, MAX_FILE_CHARS)}\n[… ${text.length - MAX_FILE_CHARS} more characters]`;
      },
    },
  ]);
}

/** A path as the tools print it (forward slashes). */
export function toolPath(...parts: string[]): string {
  return parts.join('/').split(sep).join('/');
}
