/**
 * A run's upgrades as the CLI and the viewer show them: where each took effect, why, which parts
 * of the identity it changed, and the tools it added and removed — read from the run's
 * `upgrade` records, the tools of the snapshot in force before and after each one.
 * @module
 */
import type { JsonValue, RunLogView } from '../../core/index.ts';

/** One upgrade of a run, as `polyloop show --json` and the viewer's run JSON give it. */
export type UpgradeSummary = {
  /** The first step run under the new identity. */
  readonly stepIndex: number;
  readonly reason: string;
  readonly at: string;
  /** The top-level identity keys it changed (`context`, `tools`, `model`, …), sorted. */
  readonly changed: readonly string[];
  /** Tool names in force after it and not before (`added`), and before and not after (`removed`), sorted. */
  readonly tools: { readonly added: readonly string[]; readonly removed: readonly string[] };
  /** The hash of the identity in force after it. */
  readonly snapshotHash: string;
};

/** The names of a snapshot's `tools` value (a list of descriptors). */
function toolNames(tools: JsonValue | undefined): Set<string> {
  const names = new Set<string>();
  if (!Array.isArray(tools)) return names;
  for (const t of tools) {
    if (t !== null && typeof t === 'object' && !Array.isArray(t) && typeof t['name'] === 'string') names.add(t['name']);
  }
  return names;
}

/** The names in `a` and not in `b`, sorted. */
function missingFrom(a: ReadonlySet<string>, b: ReadonlySet<string>): string[] {
  return [...a].filter((n) => !b.has(n)).sort();
}

/**
 * The run's upgrades in order. The tools in force are the started snapshot's, each upgrade's
 * new `tools` value laid over them in turn (a change without a value: the key is gone).
 */
export function upgradeSummaries(view: RunLogView): UpgradeSummary[] {
  let tools: JsonValue | undefined = view.started?.snapshot['tools'];
  return view.upgrades.map((u) => {
    const before = toolNames(tools);
    const change = u.changes['tools'];
    if (change !== undefined) tools = change.value;
    const after = toolNames(tools);
    return {
      stepIndex: u.stepIndex,
      reason: u.reason,
      at: u.at,
      changed: Object.keys(u.changes).sort(),
      tools: { added: missingFrom(after, before), removed: missingFrom(before, after) },
      snapshotHash: u.snapshotHash,
    };
  });
}

/** What an upgrade changed, in a few words: `context, tools +search -send`. */
export function upgradeChangeText(u: UpgradeSummary): string {
  const tools = ['tools', ...u.tools.added.map((n) => `+${n}`), ...u.tools.removed.map((n) => `-${n}`)].join(' ');
  return u.changed.map((key) => (key === 'tools' ? tools : key)).join(', ');
}

/** The line `polyloop show` prints where an upgrade took effect. */
export function upgradeLine(u: UpgradeSummary): string {
  return `── upgrade before step ${u.stepIndex}: ${u.reason} (changed: ${upgradeChangeText(u)}) at ${u.at}`;
}
