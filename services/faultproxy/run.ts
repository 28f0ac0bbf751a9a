import type { FaultProxyArgs } from './args.js';
import { startFaultProxy } from './server.js';
import { untilStopped } from '../../foundation/untilStopped.js';

/**
 * Runs the fault proxy until SIGTERM/SIGINT (or stdin closes, with exitWithParent).
 * Prints {"event":"listening",...} once the API answers and the -config proxies exist.
 */
export async function runFaultProxy(args: FaultProxyArgs): Promise<void> {
  const fp = await startFaultProxy({
    host: args.host,
    port: args.port,
    ...(args.seed === undefined ? {} : { seed: args.seed }),
  });
  let proxies = 0;
  if (args.config !== undefined) {
    try {
      proxies = await fp.populateFromFile(args.config);
    } catch (err) {
      await fp.close();
      throw err;
    }
  }
  process.stdout.write(
    JSON.stringify({ event: 'listening', host: args.host, port: fp.port, pid: process.pid, proxies }) + '\n',
  );
  await untilStopped(() => fp.close(), args.exitWithParent);
}
