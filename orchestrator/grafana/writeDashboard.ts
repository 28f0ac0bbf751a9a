import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dashboardFile } from './dashboard.js';

/**
 * `npm run grafana:dashboard`: writes grafana/dashboards/metabench.json from the panel
 * definition (orchestrator/report/panels.ts) through Grafana's typed builders. The file is
 * generated: edit the definition, run this, commit both.
 */
export const DASHBOARD_FILE = fileURLToPath(
  new URL('../../../grafana/dashboards/metabench.json', import.meta.url),
);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(DASHBOARD_FILE, await dashboardFile(DASHBOARD_FILE));
  console.log(`wrote ${DASHBOARD_FILE}`);
}
