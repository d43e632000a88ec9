/** `npm run dev` (scripts/dev.mjs): its --help names every knob, and a bad port is refused before wrangler starts. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './miniflare-harness.ts';

const dev = (...args: string[]) =>
  spawnSync(process.execPath, [join(ROOT, 'scripts/dev.mjs'), ...args], {
    encoding: 'utf8',
    timeout: 20_000,
    env: { ...process.env, PORT: '' },
  });

describe('scripts/dev.mjs', () => {
  it.each(['--help', '-h'])(
    'prints usage for %s naming the port, --persist-to, the token and the demo input fields, and exits 0 without starting wrangler',
    (flag) => {
      const out = dev(flag);
      expect(out.status).toBe(0);
      for (const knob of [
        '--port <n>',
        '--persist-to <dir>',
        'POLYLOOP_TOKEN',
        'PORT',
        '"goal"',
        'pauseMs',
        'approve',
        'docs/http.md',
      ])
        expect(out.stdout).toContain(knob);
      expect(out.stdout).not.toContain('PolyLoop demo Worker on');
    },
  );

  it.each([['--port', 'abc'], ['--port', '70000'], ['--port=']])(
    'refuses %s %s with the reason and usage, exit 2, before wrangler starts',
    (...args) => {
      const out = dev(...args);
      expect(out.status).toBe(2);
      expect(out.stderr).toMatch(/--port \(or \$PORT\) must be a port number from 1 to 65535/);
      expect(out.stderr).toContain('Usage: npm run dev');
      expect(out.stdout).not.toContain('PolyLoop demo Worker on');
    },
  );
});
