import { createSocket } from 'node:dgram';
import { lookup } from 'node:dns/promises';
import type { EngineAddress } from '../dockerData.js';
import { sshHostName } from './sshDial.js';

/**
 * The address of this machine an engine sees it from: the source address of the route to the
 * engine's host (tcp://, or ssh:// through ~/.ssh/config's HostName). Undefined for a local
 * socket (the engine is on this machine) or when the route cannot be found. A UDP socket's
 * connect only picks the route: nothing is sent.
 */
export async function seenFrom(addr: EngineAddress): Promise<string | undefined> {
  const host =
    'socketPath' in addr ? undefined : 'url' in addr ? new URL(addr.url).hostname : sshHostName(addr.ssh);
  if (!host) return undefined;
  try {
    return await addressToward(host.replace(/^\[|\]$/g, ''));
  } catch {
    return undefined;
  }
}

/** This machine's source address toward `host`. */
export async function addressToward(host: string): Promise<string> {
  const { address, family } = await lookup(host);
  const sock = createSocket(family === 6 ? 'udp6' : 'udp4');
  try {
    await new Promise<void>((resolve, reject) => {
      sock.once('error', reject);
      sock.connect(9, address, () => resolve());
    });
    return sock.address().address;
  } finally {
    sock.close();
  }
}
