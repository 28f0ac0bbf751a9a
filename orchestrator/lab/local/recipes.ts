import { fileURLToPath } from 'node:url';
import { apiFlags, type ApiDependencyFlags } from '../../../services/api/config.js';
import { replicaSeed, type LocalLabConfig, type LocalLlmConfig } from '../labConfig.js';

/**
 * The local lab's launch recipes: the command line of each node service it starts (the api, the fault proxy, the LLM stub), with the flags
 * that point the api at its dependencies' links.
 */

export const LLM_STUB_MAIN = fileURLToPath(new URL('../../../services/llm-stub/main.js', import.meta.url));
export const API_MAIN = fileURLToPath(new URL('../../../services/api/main.js', import.meta.url));
export const FAULTPROXY_MAIN = fileURLToPath(
  new URL('../../../services/faultproxy/main.js', import.meta.url),
);

/**
 * The command line of api replica `replica` (0 for a lab of one api); `port` 0 lets it
 * pick (the first start), else its old port (a restart). `deps` is how it reaches its
 * cache, database and LLM (their links, shared by every replica). Every replica gets the
 * same flags but its port and its seed (replicaSeed).
 */
export function apiArgs(cfg: LocalLabConfig, port: number, deps: ApiDependencyFlags, replica = 0): string[] {
  return [
    API_MAIN,
    '--host',
    cfg.host,
    '--port',
    String(port),
    ...apiFlags({ ...cfg, seed: replicaSeed(cfg.seed, replica) }, deps),
    '--exit-with-parent',
  ];
}

/** The fault proxy's command line (it picks its port). */
export function faultProxyArgs(cfg: LocalLabConfig): string[] {
  return [FAULTPROXY_MAIN, '-host', cfg.host, '-port', '0', '-seed', String(cfg.seed), '-exit-with-parent'];
}

/** The LLM stub's command line; `port` 0 lets it pick (the first start), else its old port (a restart behind the same link). */
export function llmStubArgs(cfg: LocalLabConfig, c: LocalLlmConfig, port: number): string[] {
  const r = c.rates;
  return [
    LLM_STUB_MAIN,
    '--host',
    cfg.host,
    '--port',
    String(port),
    '--profile',
    c.profileFile,
    '--seed',
    String(cfg.seed),
    '--error-rate',
    String(r.serverError),
    '--timeout-rate',
    String(r.hang),
    '--rate-limit-rate',
    String(r.rateLimit),
    '--cut-rate',
    String(r.cut),
    '--context-rate',
    String(r.contextLength),
    '--exit-with-parent',
  ];
}
