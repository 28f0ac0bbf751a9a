import { isIP } from 'node:net';

/**
 * Host:port strings as Go's net package reads them (listen and upstream addresses of
 * a proxy), and its error texts.
 */
export interface HostPort {
  host: string;
  port: number;
}

/** Go's net.SplitHostPort plus the port lookup; throws an Error worded like Go's `listen tcp: …`. */
export function splitHostPort(addr: string, op = 'listen'): HostPort {
  if (addr === '') return { host: '', port: 0 };
  let host: string;
  let portText: string;
  if (addr.startsWith('[')) {
    const close = addr.indexOf(']');
    if (close < 0) throw new Error(`${op} tcp: address ${addr}: missing ']' in address`);
    if (addr[close + 1] !== ':') throw new Error(`${op} tcp: address ${addr}: missing port in address`);
    host = addr.slice(1, close);
    portText = addr.slice(close + 2);
  } else {
    const colon = addr.lastIndexOf(':');
    if (colon < 0) throw new Error(`${op} tcp: address ${addr}: missing port in address`);
    host = addr.slice(0, colon);
    if (host.includes(':')) throw new Error(`${op} tcp: address ${addr}: too many colons in address`);
    portText = addr.slice(colon + 1);
  }
  if (portText === '') return { host, port: 0 };
  if (!/^\d+$/.test(portText)) throw new Error(`${op} tcp: lookup tcp/${portText}: unknown port`);
  const port = Number(portText);
  if (port > 65535) throw new Error(`${op} tcp: address ${portText}: invalid port`);
  return { host, port };
}

const wildcard = new Set(['', '0.0.0.0', '::']);

/** Whether a listen host means "every interface" (Go then listens dual-stack, shown as [::]). */
export function isWildcard(host: string): boolean {
  return wildcard.has(host);
}

/** The address Node should bind or dial for a Go host string. */
export function nodeHost(host: string): string {
  if (host === 'localhost') return '127.0.0.1';
  if (isWildcard(host)) return '::';
  return host;
}

/** Go's net.JoinHostPort. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * An address in the form Toxiproxy compares them in (resolved: "localhost:80" and
 * "127.0.0.1:80" are the same). Names other than localhost are compared as written.
 * Unparsable addresses compare as themselves.
 */
export function normalizeAddr(addr: string): string {
  try {
    const { host, port } = splitHostPort(addr);
    let h = nodeHost(host);
    if (isIP(h) === 6) h = canonicalIPv6(h);
    return joinHostPort(h, port);
  } catch {
    return addr;
  }
}

function canonicalIPv6(h: string): string {
  // URL's host parser prints IPv6 in its canonical compressed form.
  try {
    return new URL(`http://[${h}]/`).hostname.slice(1, -1);
  } catch {
    return h;
  }
}

/** The text of a Node socket error as Go would word the same failure of net.Listen. */
export function listenErrorText(addr: HostPort, err: NodeJS.ErrnoException): string {
  const where = joinHostPort(addr.host === 'localhost' ? '127.0.0.1' : addr.host, addr.port);
  switch (err.code) {
    case 'EADDRINUSE':
      return `listen tcp ${where}: bind: address already in use`;
    case 'EADDRNOTAVAIL':
      return `listen tcp ${where}: bind: cannot assign requested address`;
    case 'EACCES':
      return `listen tcp ${where}: bind: permission denied`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `listen tcp: lookup ${addr.host}: no such host`;
    default:
      return `listen tcp ${where}: ${err.message}`;
  }
}
