/**
 * `repairTail`: a log's last line is found by reading from the end in growing chunks, and the
 * repair is the one reading the whole file gives — the cut after a newline byte (never inside a
 * character), the line it names, the bytes it removes, what the file holds after — wherever the
 * chunk boundaries fall: on a line's first byte, inside a multi-byte character, past a torn line
 * longer than two chunks. What the repair keeps is what a read keeps.
 */
import { open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeRecord } from '../../../src/core/index.ts';
import { FileStore } from '../../../src/platform-node/index.ts';
import { countLines, isCompleteJson, lastLineStart, NEWLINE, repairTail } from '../../../src/platform-node/log-text.ts';
import type { TailRepair } from '../../../src/platform-node/log-text.ts';
import { modelIntent, modelResult, started } from '../../contract/run-store.contract.ts';
import { tempDir } from '../../support/temp-dir.ts';

/** What `repairTail` reads from the end first. */
const CHUNK = 64 * 1024;

/** The repair of the whole-file implementation it replaced (9a96fcb), and the bytes it leaves. */
function wholeFileRepair(buf: Buffer): { repair: TailRepair | null; after: Buffer } {
  if (buf.length === 0) return { repair: null, after: buf };
  const start = lastLineStart(buf);
  const hasNewline = buf[buf.length - 1] === NEWLINE;
  const line = countLines(buf, start) + 1;
  if (!isCompleteJson(buf.subarray(start, hasNewline ? buf.length - 1 : buf.length).toString('utf8')))
    return { repair: { code: 'tail_truncated', line, bytes: buf.length - start }, after: buf.subarray(0, start) };
  if (hasNewline) return { repair: null, after: buf };
  return { repair: { code: 'tail_newline_added', line, bytes: 1 }, after: Buffer.concat([buf, Buffer.from('\n')]) };
}

/** A JSON line of exactly `bytes` bytes (no newline): `{"p":"…"}`, filled with `unit`, topped up with `a`. */
function jsonOf(bytes: number, unit = 'a'): string {
  const room = bytes - '{"p":""}'.length;
  const size = Buffer.byteLength(unit);
  return `{"p":"${unit.repeat(Math.floor(room / size))}${'a'.repeat(room % size)}"}`;
}

/** Three complete lines, the last one with multi-byte characters. */
const HEAD = `${jsonOf(40)}\n${jsonOf(90_000)}\n${jsonOf(3_001, 'é€🚀')}\n`;

/** A torn line of exactly `bytes` bytes: a JSON line cut short. */
const torn = (bytes: number): string => jsonOf(bytes + 10).slice(0, bytes);

type Case = {
  readonly name: string;
  readonly bytes: Buffer;
  readonly expected: TailRepair | null;
  readonly kept: number;
};

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
const headBytes = utf8(HEAD).length;

const CASES: readonly Case[] = [
  { name: 'an empty file', bytes: utf8(''), expected: null, kept: 0 },
  {
    name: 'a file of one newline',
    bytes: utf8('\n'),
    expected: { code: 'tail_truncated', line: 1, bytes: 1 },
    kept: 0,
  },
  { name: 'two newlines', bytes: utf8('\n\n'), expected: { code: 'tail_truncated', line: 2, bytes: 1 }, kept: 1 },
  {
    name: 'a short torn line alone',
    bytes: utf8(torn(10)),
    expected: { code: 'tail_truncated', line: 1, bytes: 10 },
    kept: 0,
  },
  ...[CHUNK - 1, CHUNK, CHUNK + 1, 4 * CHUNK - 1, 4 * CHUNK, 4 * CHUNK + 1, CHUNK + 4 * CHUNK + 1, 1_500_000].flatMap(
    (n) => [
      {
        name: `a torn line of ${n} bytes after complete lines`,
        bytes: Buffer.concat([utf8(HEAD), utf8(torn(n))]),
        expected: { code: 'tail_truncated', line: 4, bytes: n } as const,
        kept: headBytes,
      },
      {
        name: `a torn line of ${n} bytes alone`,
        bytes: utf8(torn(n)),
        expected: { code: 'tail_truncated', line: 1, bytes: n } as const,
        kept: 0,
      },
    ],
  ),
  // The first chunk starts 0-3 bytes into a four-byte character of the torn line.
  ...[0, 1, 2, 3].map((k) => {
    const tail = Buffer.concat([utf8('{"p":"'), utf8('🚀'.repeat(CHUNK / 4 + 2))]).subarray(0, CHUNK + k);
    return {
      name: `a torn line of four-byte characters, the chunk starting ${k} bytes into one`,
      bytes: Buffer.concat([utf8(HEAD), tail]),
      expected: { code: 'tail_truncated', line: 4, bytes: CHUNK + k } as const,
      kept: headBytes,
    };
  }),
  // The first chunk starts 0-3 bytes into a character of the last complete line; the torn line is short.
  ...[0, 1, 2, 3].map((k) => {
    const last = jsonOf(CHUNK, '🚀');
    const tailLen = CHUNK - (Buffer.byteLength(last) + 1) + 6 + k + 100;
    return {
      name: `a short torn line after a long line of four-byte characters (offset ${k})`,
      bytes: Buffer.concat([utf8(`${jsonOf(40)}\n${last}\n`), utf8(torn(Math.max(tailLen, 5)))]),
      expected: { code: 'tail_truncated', line: 3, bytes: Math.max(tailLen, 5) } as const,
      kept: Buffer.byteLength(`${jsonOf(40)}\n${last}\n`),
    };
  }),
  // A complete last line that fills the first chunk, or is one byte, two bytes longer: only its
  // own newline is in the chunk (from its start, or from inside its first character).
  ...[CHUNK - 2, CHUNK - 1, CHUNK, CHUNK + 1, CHUNK + 2, 4 * CHUNK].flatMap((n) => [
    {
      name: `a complete last line of ${n} bytes with its newline`,
      bytes: utf8(`${HEAD}${jsonOf(n, '€')}\n`),
      expected: null,
      kept: headBytes + n + 1,
    },
    {
      name: `a complete last line of ${n} bytes without its newline`,
      bytes: utf8(`${HEAD}${jsonOf(n, '€')}`),
      expected: { code: 'tail_newline_added', line: 4, bytes: 1 } as const,
      kept: headBytes + n,
    },
  ]),
  {
    name: 'a complete last line of exactly one chunk with its newline',
    bytes: utf8(`${HEAD}${jsonOf(CHUNK - 1)}\n`),
    expected: null,
    kept: headBytes + CHUNK,
  },
  {
    name: 'a complete last line of exactly one chunk without its newline',
    bytes: utf8(`${HEAD}${jsonOf(CHUNK)}`),
    expected: { code: 'tail_newline_added', line: 4, bytes: 1 },
    kept: headBytes + CHUNK,
  },
  {
    name: 'a complete last line of five chunks without its newline, alone',
    bytes: utf8(jsonOf(5 * CHUNK, '€')),
    expected: { code: 'tail_newline_added', line: 1, bytes: 1 },
    kept: 5 * CHUNK,
  },
  {
    name: 'a complete record that lost only its newline',
    bytes: utf8(`${HEAD}${encodeRecord(modelIntent(1))}`),
    expected: { code: 'tail_newline_added', line: 4, bytes: 1 },
    kept: headBytes + Buffer.byteLength(encodeRecord(modelIntent(1))),
  },
  {
    name: 'a record torn one byte short of its closing brace',
    bytes: utf8(`${HEAD}${encodeRecord(modelIntent(1)).slice(0, -1)}`),
    expected: { code: 'tail_truncated', line: 4, bytes: Buffer.byteLength(encodeRecord(modelIntent(1))) - 1 },
    kept: headBytes,
  },
  {
    name: 'a torn line ending inside a character',
    bytes: Buffer.concat([utf8(`${HEAD}{"p":"€`), utf8('€').subarray(0, 2)]),
    expected: { code: 'tail_truncated', line: 4, bytes: 11 },
    kept: headBytes,
  },
];

async function repaired(bytes: Buffer): Promise<{ repair: TailRepair | null; after: Buffer }> {
  const path = join(await tempDir(), 'log.jsonl');
  await writeFile(path, bytes);
  const fh = await open(path, 'r+');
  try {
    const repair = await repairTail(fh);
    return { repair, after: await readFile(path) };
  } finally {
    await fh.close();
  }
}

describe('repairTail', () => {
  it.each(CASES)('repairs $name as reading the whole file would, cutting after a newline byte', async (c) => {
    const got = await repaired(c.bytes);
    const whole = wholeFileRepair(c.bytes);
    expect(got.repair).toEqual(c.expected);
    expect(got.repair).toEqual(whole.repair);
    expect(got.after.equals(whole.after)).toBe(true);
    expect(got.after.subarray(0, c.kept).equals(c.bytes.subarray(0, c.kept))).toBe(true);
    // The file ends at a line boundary, and what is kept is whole UTF-8.
    if (got.after.length > 0) expect(got.after[got.after.length - 1]).toBe(NEWLINE);
    expect(got.after.length).toBe(c.expected?.code === 'tail_newline_added' ? c.kept + 1 : c.kept);
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(got.after)).not.toThrow();
  });

  it('takes no proper prefix of a record for complete JSON: each is cut off, the whole record kept', async () => {
    const record = utf8(encodeRecord(modelResult(3, 'naïve € 🚀 "quoted" {braces}')));
    const head = utf8(`${encodeRecord(started('r'))}\n`);
    const path = join(await tempDir(), 'log.jsonl');
    const codes: string[] = [];
    for (let n = 1; n <= record.length; n++) {
      await writeFile(path, Buffer.concat([head, record.subarray(0, n)]));
      const fh = await open(path, 'r+');
      try {
        const repair = await repairTail(fh);
        codes.push(`${n}:${repair?.code}:${repair?.line}`);
      } finally {
        await fh.close();
      }
      const after = await readFile(path);
      expect(after.equals(n < record.length ? head : Buffer.concat([head, record, utf8('\n')]))).toBe(true);
    }
    expect(codes.filter((c) => !c.endsWith(':tail_truncated:2'))).toEqual([`${record.length}:tail_newline_added:2`]);
  });

  it('keeps exactly the lines a read keeps, and the next append lands on a line of its own', async () => {
    const dir = await tempDir();
    const path = new FileStore({ dir }).logPath('r');
    const records = [started('r'), modelIntent(0), modelResult(0, '🚀'.repeat(20_000))];
    const head = utf8(records.map((r) => `${encodeRecord(r)}\n`).join(''));
    const rockets = Buffer.concat([utf8('{"kind":"intent","p":"'), utf8('🚀'.repeat(CHUNK + 1))]);
    // A torn line whose first chunk starts inside each byte of a four-byte character, or exactly
    // on the line's first byte (the first chunk, or the second).
    for (const n of [CHUNK, CHUNK + 1, CHUNK + 2, CHUNK + 3, 4 * CHUNK, 4 * CHUNK + 1]) {
      await writeFile(path, Buffer.concat([head, rockets.subarray(0, n)]));
      const before = await new FileStore({ dir, onWarning: () => undefined }).readLogLines('r');
      const warnings: string[] = [];
      const store = new FileStore({ dir, onWarning: (w) => void warnings.push(`${w.code}:${w.line}`) });
      await store.intent('r', modelIntent(7));
      expect(warnings).toEqual(['tail_truncated:4']);
      const after = await store.readLogLines('r');
      expect(after.lines).toHaveLength(4);
      expect(after.lines.slice(0, -1)).toEqual(before.lines);
      expect((await readFile(path)).subarray(0, head.length).equals(head)).toBe(true);
      expect(await store.readLog('r')).toEqual([...records, modelIntent(7)]);
    }
  });
});
