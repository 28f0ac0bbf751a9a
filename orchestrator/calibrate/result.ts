import type { Runtime } from '../lab/runtimes.js';
import type { SaturationResult, SaturationRule } from './saturation.js';
import type { StepDetail } from './steps.js';

/** calibration.json: everything the step test found, and how. */
export interface CalibrationResult {
  readonly experiment: string;
  readonly experimentFile: string | null;
  readonly runtime: Runtime;
  readonly startedAt: string;
  readonly scale: number;
  readonly seed: number;
  readonly usable: boolean;
  readonly warnings: string[];
  readonly load: { readonly arrival: string; readonly description: string };
  readonly client: string;
  readonly plan: {
    readonly stepS: number;
    readonly settleS: number;
    readonly refine: number;
    readonly ladderPerS: readonly number[];
  };
  readonly rule: SaturationRule & { readonly definition: string };
  /** null: your own system (system:), which has none. */
  readonly nominalCapacityPerS: number | null;
  readonly referenceP99Ms: number | null;
  readonly status: SaturationResult['status'] | 'interrupted';
  readonly reason: string;
  /** The saturation point: the capacity. Null unless status is "saturated". */
  readonly saturation: {
    readonly offeredPerS: number;
    readonly measuredOfferedPerS: number | null;
    readonly goodputPerS: number | null;
    readonly p99Ms: number | null;
  } | null;
  /** Not reached: the capacity is at least this; below the lowest step: at most this. */
  readonly bound: { readonly atLeastPerS?: number; readonly belowPerS?: number } | null;
  readonly peakGoodput: { readonly offeredPerS: number; readonly goodputPerS: number } | null;
  /** The margin against the declared production peak (load.productionPeak): saturation / peak. */
  readonly margin: {
    readonly productionPeakPerS: number | null;
    readonly ratio: number | null;
    readonly note: string;
  };
  /** Goodput at 150% of the saturation point (its own step, after a drain). */
  readonly overload: {
    readonly offeredPerS: number;
    readonly goodputPerS: number | null;
    /** Goodput there as a fraction of goodput at the saturation point. */
    readonly ofSaturationGoodput: number | null;
    /** Goodput there as a fraction of what was offered there. */
    readonly ofOffered: number | null;
    readonly p99Ms: number | null;
    readonly failures: StepDetail['failures'];
  } | null;
  readonly overloadNote: string | null;
  /** Unsustained steps below the saturation point (noise), by rate. */
  readonly anomaliesPerS: readonly number[];
  /** Every step in the order it ran, with its judgement (the overload probe is not judged). */
  readonly steps: readonly (StepDetail & { readonly sustained: boolean | null; readonly why: string[] })[];
  /** Where the capacity was stored, or why it was not. */
  readonly stored: { readonly file: string } | { readonly notStored: string };
}
