#!/usr/bin/env node
/**
 * Entry point of the fault proxy as its own process (the lab spawns this):
 *   node dist/services/faultproxy/main.js -host 127.0.0.1 -port 8474 -config proxies.json
 * Prints one JSON line {"event":"listening",...} on stdout when the API accepts requests.
 */
import { parseFaultProxyArgs, usage } from './args.js';
import { runFaultProxy } from './run.js';

let args: ReturnType<typeof parseFaultProxyArgs>;
try {
  args = parseFaultProxyArgs(process.argv.slice(2));
} catch (err) {
  // A flag it does not know, or a bad value: the usage, and exit 2.
  process.stderr.write(`${usage}faultproxy: ${(err as Error).message}\n`);
  process.exit(2);
}
try {
  if (args.help) process.stdout.write(usage);
  else {
    await runFaultProxy(args);
    process.exit(0);
  }
} catch (err) {
  process.stderr.write(`faultproxy: ${(err as Error).message}\n`);
  process.exit(1);
}
