/**
 * `polyloop view`: its arguments, its output and its exit codes. The server it starts
 * (src/viewer/server/viewer.ts) takes plain options and knows nothing of the command line.
 * @module
 */
import { MissingDirectoryError } from '../platform-node/store-dir.ts';
import { openViewSource, startViewer } from '../viewer/server/viewer.ts';
import type { RunningViewer } from '../viewer/server/viewer.ts';
import { EXIT, oneLine } from './render.ts';
import type { CliIo } from './render.ts';

const VIEW_USAGE = `usage:
  polyloop view <dir> [--agent <module>] [--port <n>] [--host <addr> [--allow-remote]]
  polyloop view --url <worker-url> --token <token> [--port <n>] [--host <addr> [--allow-remote]]`;

type ViewArgs = {
  dir: string | null;
  url: string | null;
  token: string | null;
  agent: string | null;
  host: string | null;
  port: number | null;
  allowRemote: boolean;
};

/** Parse `polyloop view` arguments; a string is the usage problem. */
export function parseViewArgs(argv: readonly string[]): ViewArgs | string {
  const a: ViewArgs = { dir: null, url: null, token: null, agent: null, host: null, port: null, allowRemote: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = (): string | null => argv[++i] ?? null;
    if (arg === '--allow-remote') a.allowRemote = true;
    else if (['--url', '--token', '--agent', '--host', '--port'].includes(arg)) {
      const v = value();
      if (v === null) return `${arg} needs a value`;
      if (arg === '--port') {
        if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) return `--port must be 0-65535, not ${v}`;
        a.port = Number(v);
      } else a[arg.slice(2) as 'url' | 'token' | 'agent' | 'host'] = v;
    } else if (arg.startsWith('-')) return `unknown option ${arg}`;
    else if (a.dir === null) a.dir = arg;
    else return `unexpected argument ${arg}`;
  }
  if ((a.dir === null) === (a.url === null)) return 'give a directory or --url (one of them)';
  if (a.url !== null && (a.token === null || a.token === ''))
    return '--url needs --token (the Worker refuses every request without it)';
  if (a.url !== null && a.agent !== null)
    return '--agent is for a directory: a Worker carries out replies with its own agent';
  if (a.url !== null && !/^https?:\/\//.test(a.url)) return `--url must be an http(s) URL, not ${a.url}`;
  return a;
}

/**
 * `polyloop view …`: start the viewer, print its URL, and serve until SIGINT or SIGTERM
 * (`untilStopped` replaces waiting for a signal in tests). Resolves with the exit code.
 */
export async function viewCommand(
  argv: readonly string[],
  io: CliIo,
  untilStopped?: (viewer: RunningViewer) => Promise<void>,
): Promise<number> {
  const args = parseViewArgs(argv);
  if (typeof args === 'string') {
    io.err(`polyloop: ${oneLine(args)}\n${VIEW_USAGE}\n`);
    return EXIT.usage;
  }
  let viewer: RunningViewer;
  try {
    const agent = args.agent === null ? {} : { agentModule: args.agent };
    const source = await openViewSource(
      args.url !== null ? { url: args.url, token: args.token as string } : { dir: args.dir as string, ...agent },
    );
    viewer = await startViewer({
      source,
      ...(args.host === null ? {} : { host: args.host }),
      ...(args.port === null ? {} : { port: args.port }),
      allowRemote: args.allowRemote,
    });
  } catch (e) {
    io.err(`${oneLine(`polyloop: ${e instanceof Error ? e.message : String(e)}`)}\n`);
    return e instanceof MissingDirectoryError ? EXIT.notFound : EXIT.usage;
  }
  const what =
    args.url !== null
      ? `the Worker at ${args.url}`
      : `${args.dir}${args.agent === null ? ' (read only: no --agent)' : ` with the agent in ${args.agent}`}`;
  io.out(`polyloop view: ${oneLine(what)}\n  open ${viewer.url}\n  (Ctrl-C stops it)\n`);
  await (untilStopped ?? untilSignal)(viewer);
  await viewer.close();
  return EXIT.ok;
}

function untilSignal(): Promise<void> {
  return new Promise((ok) => {
    const done = (): void => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      ok();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
