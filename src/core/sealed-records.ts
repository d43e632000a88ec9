/**
 * Records the loop built itself from checked, frozen values (decision 0042). A store in this
 * library may keep such a record as it is and encode it only when the log is read: nothing can
 * change it in between, so the bytes are the ones an encode at write time would have given.
 * The mark is a private class field (added through a constructor that returns the record): it
 * is invisible to JSON and to reflection, no caller can forge it, and it costs the garbage
 * collector nothing (a WeakSet of every record would).
 * @module
 */

class ReturnsTarget {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: returning the target puts the subclass's private field on it.
    return target;
  }
}

class Mark extends ReturnsTarget {
  #sealed = true;

  static add(rec: object): void {
    new Mark(rec);
  }

  static has(rec: object): boolean {
    return #sealed in rec;
  }
}

/** Mark `rec` as built by the loop, then freeze it (its nested values must be frozen already). */
export function seal<T extends object>(rec: T): T {
  Mark.add(rec);
  return Object.freeze(rec);
}

/** Whether the loop built `rec` with {@link seal}. */
export function isSealed(rec: object): boolean {
  return Mark.has(rec);
}
