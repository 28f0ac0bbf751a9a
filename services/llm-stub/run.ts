import { NO_FAULTS, type FaultRates } from './faults.js';
import { DEFAULT_PROFILE, loadProfile } from './profile.js';
import { startLlmStub } from './server.js';
import { untilStopped } from '../../foundation/untilStopped.js';

export interface LlmStubArgs {
  readonly host: string;
  readonly port: number;
  readonly profile?: string | undefined;
  readonly seed: number;
  readonly rates?: Partial<FaultRates>;
  readonly exitWithParent: boolean;
}

/**
 * Runs the stub until SIGTERM/SIGINT (or stdin closes, with exitWithParent). Prints
 * {"event":"listening","port":N,...} on stdout once it accepts requests.
 */
export async function runLlmStub(args: LlmStubArgs): Promise<void> {
  const profileFile = args.profile ?? DEFAULT_PROFILE;
  const profile = loadProfile(profileFile);
  const stub = await startLlmStub({
    host: args.host,
    port: args.port,
    profile,
    seed: args.seed,
    rates: { ...NO_FAULTS, ...args.rates },
  });
  process.stdout.write(
    JSON.stringify({
      event: 'listening',
      host: args.host,
      port: stub.port,
      pid: process.pid,
      profile: profile.name,
      profileFile,
    }) + '\n',
  );
  await untilStopped(() => stub.close(), args.exitWithParent);
}

/** A fault rate flag: a fraction (0.15) or a percentage (15%), from 0 to 1. */
export function parseRateFlag(flag: string, v: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(v);
  const n = m ? Number(m[1]) / (m[2] ? 100 : 1) : NaN;
  if (!(n >= 0 && n <= 1))
    throw new Error(`${flag} takes a fraction from 0 to 1 or a percentage such as 15% (got "${v}")`);
  return n;
}
