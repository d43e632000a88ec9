/**
 * A bare page for the quota case of web-example.test.ts: the test shrinks this origin's quota
 * over CDP between `prepare` and `attempt`, then restores it before `after`.
 */
import { isPolyLoopError } from '../../../src/core/index.ts';
import { IndexedDBStore } from '../../../src/platform-web/index.ts';
import { modelIntent, started, stepWrite } from '../../contract/run-store.contract.ts';

const store = new IndexedDBStore({ dbName: 'quota-case' });

/** Text that does not compress (Chromium compresses IndexedDB values). */
function incompressible(chars: number): string {
  const codes = new Uint16Array(chars);
  let x = 0x9e3779b9;
  for (let i = 0; i < chars; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    codes[i] = 0x4e00 + ((x >>> 0) % 20000);
  }
  return new TextDecoder('utf-16le').decode(codes);
}

const kinds = async (): Promise<string[]> => (await store.readLog('r')).map((r) => r.kind);

(globalThis as { quotaCase?: unknown }).quotaCase = {
  async prepare(): Promise<string[]> {
    await store.runStarted('r', started('r'));
    await store.intent('r', modelIntent(0));
    return kinds();
  },
  async attempt(): Promise<{ storeError: boolean; causeName: string | null; kinds: string[] }> {
    const err = await store.step('r', stepWrite(0, incompressible(2_000_000))).then(
      () => null,
      (e: unknown) => e,
    );
    const cause = (err as { cause?: { name?: unknown } } | null)?.cause?.name;
    return {
      storeError: isPolyLoopError(err, 'store_error'),
      causeName: typeof cause === 'string' ? cause : null,
      kinds: await kinds(),
    };
  },
  async after(): Promise<string[]> {
    await store.step('r', stepWrite(0, 'fits now'));
    return kinds();
  },
};
document.body.dataset['ready'] = 'true';
