/**
 * A deterministic local "model" for the demo: it decides from the messages alone (no hidden
 * state), so a resumed run sees the same messages and makes the same decisions. It walks `src/`
 * with `list_dir`, reads every `.ts` module with `read_file`, counts exported names, and answers
 * (first asking to `write_report` it when that tool is offered).
 * It speaks the JSON action protocol of `jsonActionInterpreter()`.
 */
import type { Message, ModelCall, ModelCaller, ModelReply } from '../../src/core/index.ts';

/** Count the names a TypeScript module exports (declarations and `export { … }` lists). */
export function countExports(source: string): number {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  let n = 0;
  n += (
    code.match(
      /^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|class|const|let|var|type|interface|enum)\s+[A-Za-z_$]/gm,
    ) ?? []
  ).length;
  for (const m of code.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}/gm)) {
    n += (m[1] ?? '').split(',').filter((s) => s.trim() !== '').length;
  }
  return n;
}

type Seen = {
  readonly listed: Set<string>;
  readonly read: Map<string, number>;
  readonly dirs: string[];
  readonly files: string[];
  reported: boolean;
};

function textOf(m: Message | undefined): string {
  return m?.content.map((b) => (b.type === 'text' ? b.text : '')).join('') ?? '';
}

/** Rebuild what the walk has seen from the history: each action and the observation after it. */
function replayHistory(messages: readonly Message[], observationPrefix: string): Seen {
  const seen: Seen = { listed: new Set(), read: new Map(), dirs: ['src'], files: [], reported: false };
  messages.forEach((m, i) => {
    if (m.role !== 'assistant') return;
    let action: { tool?: unknown; args?: { path?: unknown } };
    try {
      action = JSON.parse(textOf(m)) as typeof action;
    } catch {
      return;
    }
    const path = String(action.args?.path ?? '');
    const obs = textOf(messages[i + 1]).replace(observationPrefix, '');
    if (action.tool === 'list_dir') {
      seen.listed.add(path);
      for (const entry of obs.split('\n')) {
        if (entry.endsWith('/')) seen.dirs.push(`${path}/${entry.slice(0, -1)}`);
        else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) seen.files.push(`${path}/${entry}`);
      }
    } else if (action.tool === 'read_file') {
      seen.read.set(path, countExports(obs));
    } else if (action.tool === 'write_report') {
      // Written, or denied: either way the report was asked for once, and the answer follows.
      seen.reported = true;
    }
  });
  return seen;
}

function answer(read: ReadonlyMap<string, number>): string {
  const ranked = [...read].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const [top, ...rest] = ranked;
  if (!top) return 'I found no TypeScript modules under src/.';
  const runnersUp = rest
    .slice(0, 3)
    .map(([p, n]) => `${p} (${n})`)
    .join(', ');
  return `${top[0]} exports the most names: ${top[1]}. Runners-up: ${runnersUp}. (${ranked.length} modules read.)`;
}

/**
 * The policy as a {@link ModelCaller}. `observationPrefix` is the request's observation template
 * up to `{observation}`, so the policy can read observations back out of the history.
 */
export function localPolicy(opts: { readonly observationPrefix: string }): ModelCaller {
  return {
    params: Object.freeze({ model: 'local-export-counter', version: 1 }),
    async call(call: ModelCall): Promise<ModelReply> {
      call.signal.throwIfAborted();
      const seen = replayHistory(call.messages, opts.observationPrefix);
      const dir = seen.dirs.find((d) => !seen.listed.has(d));
      const file = seen.files.find((f) => !seen.read.has(f));
      const last = [...seen.read].at(-1);
      const reasoning = last ? `${last[0]} exports ${last[1]} names` : null;
      let text: string;
      if (dir !== undefined) text = JSON.stringify({ tool: 'list_dir', args: { path: dir } });
      else if (file !== undefined) text = JSON.stringify({ tool: 'read_file', args: { path: file } });
      else if (call.tools.some((t) => t.name === 'write_report') && !seen.reported)
        text = JSON.stringify({ tool: 'write_report', args: { text: answer(seen.read) } });
      else text = JSON.stringify({ final: answer(seen.read) });
      return { callId: `local-${call.callSeq}`, text, reasoning };
    },
  };
}
