import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { BenchError } from '../../../foundation/errors.js';
import type { EngineAddress } from '../dockerData.js';
import { seenFrom } from '../engine/seenFrom.js';
import { clientScrapeOf, type ClientScrape } from './prometheusConfig.js';

/**
 * Where the stack's Prometheus scrapes the orchestrator's client metrics. On a local engine
 * (the orchestrator on a manager), host.docker.internal, as in the docker lab: undefined
 * here. Otherwise the address the user gives (--metrics-address), or this machine's address
 * the engine sees it from, at `port`; with a fresh bearer token, since that address is
 * reachable from other machines.
 */
export async function clientScrapeFor(
  engine: EngineAddress,
  given: string | undefined,
  port: number,
): Promise<ClientScrape | undefined> {
  const token = randomBytes(24).toString('base64url');
  if (given !== undefined) return { address: given, token };
  const host = await seenFrom(engine);
  if (host === undefined) return undefined;
  return { address: `${host.includes(':') ? `[${host}]` : host}:${port}`, token };
}

/** HOST:PORT (IPv6 in brackets), checked: a host Prometheus can scrape, not 0.0.0.0 or ::. */
export function parseMetricsAddress(v: string, flag = '--metrics-address'): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d+)$/.exec(v);
  const host = m?.[1]?.replace(/^\[|\]$/g, '');
  const port = Number(m?.[2]);
  if (!host || !Number.isInteger(port) || port < 1 || port > 65535)
    throw new BenchError(
      'E_USAGE',
      `${flag} takes HOST:PORT (got "${v}")`,
      'e.g. 192.0.2.10:9464, [2001:db8::1]:9464',
    );
  if (host === '0.0.0.0' || host === '::')
    throw new BenchError(
      'E_USAGE',
      `${flag} ${v}: Prometheus scrapes this address, so it must be one of this machine's addresses, not "any"`,
    );
  return { host, port };
}

/** The client scrape of the stack's deployed Prometheus (its configuration, read back from the engine), if it has one. */
export async function deployedClientScrape(docker: Docker, stack: string): Promise<ClientScrape | undefined> {
  let ids: string[];
  try {
    const svc = (await docker.getService(`${stack}_prometheus`).inspect()) as {
      Spec?: { TaskTemplate?: { ContainerSpec?: { Configs?: { ConfigID?: string }[] } } };
    };
    ids = (svc.Spec?.TaskTemplate?.ContainerSpec?.Configs ?? []).flatMap((c) =>
      c.ConfigID ? [c.ConfigID] : [],
    );
  } catch {
    return undefined; // no Prometheus in the stack (a run's own core) or no stack
  }
  for (const id of ids) {
    const cfg = (await docker.getConfig(id).inspect()) as { Spec?: { Data?: string } };
    const found = cfg.Spec?.Data
      ? clientScrapeOf(Buffer.from(cfg.Spec.Data, 'base64').toString())
      : undefined;
    if (found) return found;
  }
  return undefined;
}
