import {
  LegendDisplayMode,
  LegendPlacement,
  ScaleDistribution,
  ScaleDistributionConfigBuilder,
  SortOrder,
  StackingConfigBuilder,
  StackingMode,
  TooltipDisplayMode,
  VisibilityMode,
  VizLegendOptionsBuilder,
  VizTooltipOptionsBuilder,
} from '@grafana/grafana-foundation-sdk/common';
import {
  AnnotationQueryBuilder,
  DashboardBuilder,
  DashboardCursorSync,
  type Dashboard,
  type DataSourceRef,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import * as units from '@grafana/grafana-foundation-sdk/units';
import { format, resolveConfig } from 'prettier';
import { PANELS, axisTitle, type Panel, type Series, type Unit } from '../report/panels.js';
import { DASHBOARD_UID } from './client.js';

/**
 * The provisioned dashboard "metabench" (grafana/dashboards/metabench.json), built with
 * Grafana's typed builders from the panel definition (orchestrator/report/panels.ts): a field
 * the pinned SDK's schema does not have is a compile error, not a blank panel. The file is
 * written by `npm run grafana:dashboard` and never edited by hand; dashboard.test.ts fails
 * when it differs from what this builds.
 */

/** The lab's Prometheus, as grafana/provisioning/datasources/prometheus.yml provisions it. */
export const PROMETHEUS: DataSourceRef = { type: 'prometheus', uid: 'prometheus' };

/** Grafana's unit for each of the panels' units. */
const GRAFANA_UNIT: Record<Unit, string> = {
  'req/s': units.RequestsPerSecond,
  // A ratio of counts: Grafana has no unit for it; the axis label names it.
  'requests per origin': units.NoUnit,
  ms: units.Milliseconds,
  requests: units.Short,
  workers: units.Short,
  connections: units.Short,
  origins: units.Short,
  '%': units.Percent,
  '% of one core': units.Percent,
  MiB: units.Mebibytes,
};

export function grafanaUnit(u: Unit): string {
  return GRAFANA_UNIT[u];
}

/** Two panels a row, each half the 24-column grid wide and 8 rows high. */
const WIDTH = 12;
const HEIGHT = 8;

/** A series' legend: a family's members are `name value` (`{{reason}}` is the label's value). */
export function legendOf(s: Series): string {
  if (s.each === undefined) return s.name;
  return s.name ? `${s.name} {{${s.each}}}` : `{{${s.each}}}`;
}

/** The value axis's label: with its unit, unless its series count different things (requests, workers). */
function axisLabel(p: Panel): string {
  return new Set(p.series.map((s) => s.unit ?? p.unit)).size > 1 ? p.axis : axisTitle(p.axis, p.unit);
}

function panel(p: Panel, index: number): PanelBuilder {
  const b = new PanelBuilder()
    .id(index + 1)
    .title(p.title)
    .description(p.description)
    .datasource(PROMETHEUS)
    .gridPos({ x: (index % 2) * WIDTH, y: Math.floor(index / 2) * HEIGHT, w: WIDTH, h: HEIGHT })
    .unit(grafanaUnit(p.unit))
    .axisLabel(axisLabel(p))
    .lineWidth(1)
    .fillOpacity(0)
    .showPoints(VisibilityMode.Never)
    .stacking(new StackingConfigBuilder().mode(StackingMode.None))
    .legend(
      new VizLegendOptionsBuilder()
        .displayMode(LegendDisplayMode.List)
        .placement(LegendPlacement.Bottom)
        .showLegend(true),
    )
    .tooltip(new VizTooltipOptionsBuilder().mode(TooltipDisplayMode.Multi).sort(SortOrder.None));
  if (p.log) b.scaleDistribution(new ScaleDistributionConfigBuilder().type(ScaleDistribution.Log).log(10));
  // Only what a metric measures: a series the report alone draws has no query.
  const plotted = p.series.filter((s) => s.promql !== undefined);
  plotted.forEach((s, i) =>
    b.withTarget(
      new DataqueryBuilder()
        .datasource(PROMETHEUS)
        .expr(s.promql!)
        .legendFormat(legendOf(s))
        .refId(String.fromCharCode(65 + i))
        .range(),
    ),
  );
  return b;
}

/** The dashboard, as Grafana's schema types it. */
export function buildDashboard(): Dashboard {
  const d = new DashboardBuilder('metabench')
    .uid(DASHBOARD_UID)
    .tags(['metabench'])
    .timezone('utc')
    .version(1)
    .editable()
    .tooltip(DashboardCursorSync.Crosshair)
    .refresh('5s')
    .time({ from: 'now-15m', to: 'now' })
    // `metabench run --runtime docker` posts runs and trigger windows as annotations of this dashboard.
    .annotation(
      new AnnotationQueryBuilder()
        .builtIn(1)
        .datasource({ type: 'grafana', uid: '-- Grafana --' })
        .enable(true)
        .hide(false)
        .iconColor('rgba(255, 96, 96, 1)')
        .name('Runs and triggers')
        .type('dashboard'),
    );
  PANELS.forEach((p, i) => d.withPanel(panel(p, i)));
  return d.build();
}

/** grafana/dashboards/metabench.json's text: the dashboard as JSON, formatted as the repository formats JSON. */
export async function dashboardFile(path: string): Promise<string> {
  const options = (await resolveConfig(path)) ?? {};
  // Indented first: prettier keeps an object expanded when its text was.
  return format(JSON.stringify(buildDashboard(), null, 2), { ...options, filepath: path });
}
