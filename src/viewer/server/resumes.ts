/**
 * Where each driver took a run over, as the CLI and the viewer show it: the run's `resumed`
 * records (`readRunLog`'s `resumes`), numbered by driver session, and which session carried out a
 * step. A mark changes nothing a run does; it only says who did what
 * (docs/design/run-log.md#where-each-driver-took-over).
 * @module
 */
import type { InFlightResolution, RunLogView } from '../../core/index.ts';

/** One place a later driver took the run over, as `polyloop show --json` and the viewer's run JSON give it. */
export type ResumeSummary = {
  /** The step that driver carried on: the interrupted one, or the next one at a step boundary. */
  readonly stepIndex: number;
  /** How it went on with the interrupted step (`replay_action`, `await_input`, …); null at a step boundary. */
  readonly resolution: InFlightResolution | null;
  readonly at: string;
  /** The driver session: 2 for the first driver that took the run over, 3 for the next, … (1 started it). */
  readonly driver: number;
};

/** The run's marks in log order, each with its driver session. */
export function resumeSummaries(view: RunLogView): ResumeSummary[] {
  return view.resumes.map((r, i) => ({ stepIndex: r.stepIndex, resolution: r.resolution, at: r.at, driver: i + 2 }));
}

/**
 * The driver session that carried out step `stepIndex`: the last one that took the run over at or
 * before it (1, the driver that started the run, when none did). A step a driver took over in flight
 * was begun by the one before; it is counted to the driver that finished it.
 */
export function driverOf(resumes: readonly Pick<ResumeSummary, 'stepIndex'>[], stepIndex: number): number {
  let driver = 1;
  for (const [i, r] of resumes.entries()) if (r.stepIndex <= stepIndex) driver = i + 2;
  return driver;
}

/** How a mark says the driver went on: the resolution's name, or that it started at a step boundary. */
export function resumeHow(resolution: string | null): string {
  return resolution ?? 'at a step boundary';
}

/** The line `polyloop show` prints before the first step a later driver carried out. */
export function resumeLine(r: ResumeSummary): string {
  return `── resumed by a later driver at step ${r.stepIndex} (${resumeHow(r.resolution)}) at ${r.at}`;
}

/**
 * The lines `polyloop show` prints for the marks at one place: one per mark, but a row of marks
 * alike (same step, same resolution: a crash loop resumed again and again) folded into one line that
 * says how many, and the first and last time, so a run resumed ten thousand times stays a screen.
 */
export function resumeLines(marks: readonly ResumeSummary[]): string[] {
  const lines: string[] = [];
  for (let i = 0; i < marks.length; ) {
    const first = marks[i] as ResumeSummary;
    let j = i + 1;
    while (j < marks.length && alike(marks[j] as ResumeSummary, first)) j++;
    const last = marks[j - 1] as ResumeSummary;
    lines.push(
      j - i === 1
        ? resumeLine(first)
        : `── resumed by ${j - i} later drivers in a row at step ${first.stepIndex} ` +
            `(${resumeHow(first.resolution)}), the first at ${first.at}, the last at ${last.at}`,
    );
    i = j;
  }
  return lines;
}

const alike = (a: ResumeSummary, b: ResumeSummary): boolean =>
  a.stepIndex === b.stepIndex && a.resolution === b.resolution;
