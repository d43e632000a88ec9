/**
 * The demo's tools: read-only views of the repository (`list_dir`, `read_file`), both `safe`
 * to replay. Paths are relative to the repository root and may not leave it. In `--approve`
 * mode a third tool, `write_report`, writes the answer to a file: a side effect (`never`
 * replayed) that a person approves first.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ToolRegistry } from '../../src/core/index.ts';
import type { JsonObject, ToolSpec } from '../../src/core/index.ts';

const MAX_FILE_CHARS = 60_000;

function inside(root: string, path: unknown): string {
  if (typeof path !== 'string' || path === '' || isAbsolute(path))
    throw new Error(`path must be a relative path inside the repository, got ${JSON.stringify(path)}`);
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

/** The tool that needs approval: writes `text` to `file` (the only file it ever writes). */
export function reportTool(file: string): ToolSpec {
  return {
    name: 'write_report',
    description: 'Write the final report (markdown) to the report file. A person approves it first.',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
      additionalProperties: false,
    },
    replayPolicy: 'never',
    needsApproval: true,
    handler: async (args) => {
      const text = String(args['text']);
      await writeFile(file, `${text}\n`, 'utf8');
      return `wrote ${text.length} chars to ${file}`;
    },
  };
}

/** `list_dir` and `read_file` over `root`, and `write_report` to `reportFile` when given. */
export function repoTools(root: string, reportFile: string | null = null): ToolRegistry {
  return ToolRegistry.of([
    ...(reportFile === null ? [] : [reportTool(reportFile)]),
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
        return text.length <= MAX_FILE_CHARS
          ? text
          : `${text.slice(0, MAX_FILE_CHARS)}\n[… ${text.length - MAX_FILE_CHARS} more characters]`;
      },
    },
  ]);
}

/** A path as the tools print it (forward slashes). */
export function toolPath(...parts: string[]): string {
  return parts.join('/').split(sep).join('/');
}
