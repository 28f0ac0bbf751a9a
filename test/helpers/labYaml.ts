/**
 * A small built-in-lab experiment for spec tests: `api` as extra fields of its lab.api line
 * (`replicas: 2, `), `trigger` as its one trigger, written one field a line
 * (`kind: pause, target: api, duration: 2s`), so an error's line is its field's.
 */
export function labExperiment(api: string, trigger = 'kind: pause, target: api, duration: 2s'): string {
  return `name: r
lab:
  api: { ${api}workers: 4, work: { dist: constant, mean: 10ms } }
load: { arrival: constant, rate: 100/s }
client: { timeout: 1s, retry: { policy: none } }
schedule:
  warmup: 1s
  baseline: 2s
  trigger:
    ${trigger.split(', ').join('\n    ')}
  observe: 2s
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
`;
}
