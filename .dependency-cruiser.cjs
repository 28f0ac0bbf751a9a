// The layers of docs/architecture.md, enforced (`npm run lint`; test/layers.test.ts checks
// that these rules catch a wrong import and a cycle). Paths are relative to the repository.
// From the bottom: foundation; the load engine (bench) and the services; the lab's interface
// (the experiment spec, Lab and RuntimePlugin, the triggers, the scraper, /proc); the runtimes
// (local, docker, swarm, sim, and any folder added under orchestrator/lab/) beside the engine
// code the Docker-based ones share; the orchestrator's core; the composition root (the CLI)
// and the model tools.
// Tests and benchmarks sit above everything.

/** The lab's interface: what the runtimes implement and the orchestrator calls, below both. */
const LAB_INTERFACE = '^orchestrator/(spec/|scrape/|trigger/|lab/proc/|lab/[^/]+[.]ts$)';
/**
 * Every runtime: each folder under orchestrator/lab/ but the shared ones (proc, engine), and
 * sim/. A new runtime's folder is covered without a change here.
 */
const RUNTIMES = '^(orchestrator/lab/(?!proc/|engine/)[^/]+|sim)/';
/** The Docker Engine code the docker and swarm runtimes share (layer 4, below both). */
const ENGINE = '^orchestrator/lab/engine/';
const CORE = '^orchestrator/(analysis|calibrate|export|grafana|live|loadtest|report|results|run|sweep)/';
const ROOT = '^orchestrator/(cli|model)/';
const TOP = '^(benchmarks|test)/|[.]test[.]ts$';
/** Every first-party folder (tsconfig.json's include). */
const ANY_OF_OURS = '^(foundation|bench|services|orchestrator|sim|benchmarks|test|types)/';
/** Tests may import whatever they exercise. */
const NOT_A_TEST = '[.]test[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycle between files (type-only imports count).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'foundation-is-the-bottom',
      comment: 'foundation/ imports only foundation/ and packages.',
      severity: 'error',
      from: { path: '^foundation/', pathNot: NOT_A_TEST },
      to: { path: ANY_OF_OURS, pathNot: '^foundation/' },
    },
    {
      name: 'load-engine-on-foundation',
      comment: 'The load engine (bench/) imports only foundation/.',
      severity: 'error',
      from: { path: '^bench/', pathNot: NOT_A_TEST },
      to: { path: ANY_OF_OURS, pathNot: '^(foundation|bench)/' },
    },
    {
      name: 'services-on-foundation',
      comment: 'A service imports only foundation/ and itself: each is a program of its own.',
      severity: 'error',
      from: { path: '^services/([^/]+)/', pathNot: NOT_A_TEST },
      to: { path: ANY_OF_OURS, pathNot: ['^foundation/', '^services/$1/'] },
    },
    {
      name: 'lab-interface-below-runtimes',
      comment:
        'The spec, Lab, RuntimePlugin, the triggers, the scraper and /proc import no runtime and nothing above.',
      severity: 'error',
      from: { path: LAB_INTERFACE, pathNot: NOT_A_TEST },
      to: { path: [RUNTIMES, ENGINE, CORE, ROOT, TOP] },
    },
    {
      name: 'runtimes-below-orchestrator',
      comment: "A runtime implements the lab's interface; it imports no orchestrator code above it.",
      severity: 'error',
      from: { path: [RUNTIMES, ENGINE], pathNot: NOT_A_TEST },
      to: { path: [CORE, ROOT, TOP] },
    },
    {
      name: 'engine-below-runtimes',
      comment: 'The shared engine code serves the runtimes; it imports none of them.',
      severity: 'error',
      from: { path: ENGINE, pathNot: NOT_A_TEST },
      to: { path: RUNTIMES },
    },
    {
      name: 'runtimes-independent',
      comment: 'A runtime imports no other runtime (what two share goes to orchestrator/lab/engine/).',
      severity: 'error',
      from: { path: RUNTIMES, pathNot: NOT_A_TEST },
      to: { path: RUNTIMES, pathNot: '^$1/' },
    },
    {
      name: 'core-reaches-runtimes-by-registry',
      comment:
        'The orchestrator reaches a runtime through runtimePlugin(name); only the composition root names one.',
      severity: 'error',
      from: { path: CORE, pathNot: NOT_A_TEST },
      to: { path: [RUNTIMES, ENGINE, ROOT, TOP] },
    },
    {
      name: 'root-below-tests',
      comment: 'The CLI and the model tools import no test or benchmark.',
      severity: 'error',
      from: { path: ROOT, pathNot: NOT_A_TEST },
      to: { path: TOP },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    // Type-only imports are layering too.
    tsPreCompilationDeps: true,
  },
};
