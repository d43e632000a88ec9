/**
 * The run object's phase (src/platform-workers/run-phase.ts): idle, adopting an import, or a drive
 * that is preparing or calling the library — every change of it, in one place.
 */
import { describe, expect, it } from 'vitest';
import { RunPhase } from '../../../src/platform-workers/run-phase.ts';

/** A drive that runs until `finish` is called, and the controller it was launched with. */
function heldDrive() {
  let finish: (e?: unknown) => void = () => undefined;
  let controller: AbortController | null = null;
  const run = (c: AbortController): Promise<void> => {
    controller = c;
    return new Promise<void>((ok, fail) => (finish = (e?: unknown) => (e === undefined ? ok() : fail(e))));
  };
  return { run, finish: (e?: unknown) => finish(e), controller: () => controller as AbortController | null };
}

describe('RunPhase', () => {
  it('starts idle: no drive, nothing to wait for, not adopting', () => {
    const phase = new RunPhase();
    expect([phase.drive, phase.busy, phase.adopting]).toEqual([null, null, false]);
  });

  it('takes the run id while an import is written, and gives it back after', () => {
    const phase = new RunPhase();
    phase.adopt();
    expect(phase.adopting).toBe(true);
    phase.adopted();
    expect(phase.adopting).toBe(false);
  });

  it('keeps a drive launched while an import was being written when the import is over', () => {
    const phase = new RunPhase();
    phase.adopt();
    const drive = phase.launch(heldDrive().run);
    phase.adopted();
    expect([phase.drive, phase.adopting]).toEqual([drive, false]);
  });

  it('starts a drive in the same turn, gives a second launch the drive under way, and is idle after', async () => {
    const phase = new RunPhase();
    const held = heldDrive();
    const drive = phase.launch(held.run);
    expect(held.controller()).not.toBeNull();
    let second = false;
    expect(phase.launch(async () => void (second = true))).toBe(drive);
    held.finish();
    await drive;
    expect([phase.drive, second]).toEqual([null, false]);
  });

  it('rejects as the drive does, and is idle after it', async () => {
    const phase = new RunPhase();
    const held = heldDrive();
    const drive = phase.launch(held.run);
    held.finish(new Error('the storage refused'));
    await expect(drive).rejects.toThrow('the storage refused');
    expect(phase.drive).toBeNull();
  });

  it('aborts only a drive that is calling the library, with the controller it renewed last', () => {
    const phase = new RunPhase();
    const held = heldDrive();
    void phase.launch(held.run);
    phase.abort('cancel');
    expect(held.controller()?.signal.aborted).toBe(false);
    phase.calling();
    const renewed = phase.renew();
    phase.abort('cancel');
    expect([held.controller()?.signal.aborted, renewed.signal.reason]).toEqual([false, 'cancel']);
  });

  it('has a reply wait for the landing reply first, then for the drive', async () => {
    const phase = new RunPhase();
    const held = heldDrive();
    const drive = phase.launch(held.run);
    let land: () => void = () => undefined;
    const landing = new Promise<void>((ok) => (land = ok));
    phase.land(landing);
    expect(phase.busy).toBe(landing);
    land();
    await landing;
    await Promise.resolve();
    expect(phase.busy).toBe(drive);
    held.finish();
    await drive;
  });
});
