import type { RunManifest } from './manifest.js';

/** What a bundle's BUNDLE.json says (bundle.ts writes it, openBundle.ts reads it). */
export const BUNDLE_ROOT = 'bundle';
export const BUNDLE_FORMAT = 1;

export interface BundleInfo {
  readonly format: number;
  readonly experiment: string;
  /** The metabench that ran the experiment, as run-1/manifest.json recorded it. */
  readonly ranWith: { metabench: string; gitRevision: string | null; node: string | null };
  /** The metabench that made the bundle (its package-lock.json pins every dependency). */
  readonly exportedWith: {
    metabench: string;
    gitRevision: string | null;
    node: string;
    packageLockSha256: string | null;
  };
  readonly runtime: string;
  readonly scale: number;
  readonly seed: number;
  readonly repeat: number;
  readonly capacity: RunManifest['capacity'];
  /** The command line of the original run (argv after `metabench`). */
  readonly command: readonly string[] | null;
  readonly sourceFile: string | null;
}

/** BUNDLE.json of a sweep's bundle (sweepBundle.ts writes it; `metabench sweep --from-bundle` reads it). */
export interface SweepBundleInfo {
  readonly format: number;
  readonly kind: 'sweep';
  readonly sweep: string;
  /** The base experiment's name. */
  readonly experiment: string;
  /** The metabench that ran the sweep, as its first point's manifest recorded it. */
  readonly ranWith: BundleInfo['ranWith'];
  readonly exportedWith: BundleInfo['exportedWith'];
  readonly runtime: string;
  readonly scale: number;
  readonly repeat: number;
  readonly design: string;
  /** Points in the sweep's plan, and those the bundle holds results of. */
  readonly points: number;
  readonly pointsWithResults: number;
  readonly command: readonly string[] | null;
  /** The sweep file and the base experiment file as written, when still readable (source/…). */
  readonly sourceFiles: readonly string[];
}
