import { apiLinkProxy } from '../apiLink.js';
import type { LinkSpec } from '../links.js';
import { apiService } from './replicas.js';

/**
 * The api link in the Docker lab (lab/apiLink.ts): one Toxiproxy link per api replica,
 * listening inside the toxiproxy container, upstream the replica's service on the compose
 * network, published to 127.0.0.1 so the load generator on this host reaches it. Only a run
 * that uses the link adds the override below: a plain run keeps the compose file's toxiproxy.
 */

/** Where replica 0's link listens in the fault proxy's container (beside 26379, 25432, 28000: its dependency links). */
export const API_LINK_PORT_BASE = 28080;

/** The container port of the link to api replica `i`, as the engine names a published port. */
export function apiLinkContainerPort(i: number): string {
  return `${API_LINK_PORT_BASE + i}/tcp`;
}

/** Replica `i` as the fault proxy dials it on the compose network: its service's name. */
export function apiServiceUpstream(i: number): string {
  return `${apiService(i)}:8080`;
}

/**
 * The fault proxy's link to each of `replicas` api replicas: the proxy's name, where it
 * listens, the replica's address (`upstream`: the service's name unless the lab says otherwise).
 */
export function apiLinkSpecs(
  replicas: number,
  upstream: (i: number) => string = apiServiceUpstream,
): LinkSpec[] {
  return Array.from({ length: replicas }, (_, i) => ({
    name: apiLinkProxy(i, replicas),
    listen: `0.0.0.0:${API_LINK_PORT_BASE + i}`,
    upstream: upstream(i),
  }));
}

/**
 * The override's toxiproxy service: its links to the replicas published on loopback, each on a
 * host port the engine picks (no METABENCH_*_PORT to collide with; the lab reads it back).
 * Compose (v1 and v2) appends an override's ports to the file's own (8474).
 */
export function apiLinkOverride(replicas: number): { toxiproxy: { ports: string[] } } {
  return {
    toxiproxy: {
      ports: Array.from({ length: replicas }, (_, i) => `127.0.0.1::${API_LINK_PORT_BASE + i}`),
    },
  };
}
