import uPlot from 'uplot';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { Badge, Empty, Loading, Notice, PageTitle, Time, useLoad } from '../components/ui';
import { utcLegendTime, utcTickLabels } from '../chartTime';
import { plural } from '../format';
import { useFlash, useLive } from '../live';
import { useSession } from '../session';
import { everyDay } from '../usageDays';
import type { UsageReport, UsageStats } from '../../server/contract/usage';

// This module is its own chunk (App loads it with import()), so uPlot is fetched only when the page opens.

const DAYS = 90;
/** New reports refresh the charts at most this often: a busy hour must not re-draw on every report. */
const REFRESH_MS = 5_000;

export function UsagePage() {
  const session = useSession();
  const canList = session.can('content.manage');
  const stats = useLoad(() => api('GET /api/usage/stats', { query: { days: DAYS } }), []);
  const recent = useLoad(
    () => (canList ? api('GET /api/usage', { query: { limit: 50 } }).then((r) => r.reports) : Promise.resolve([] as UsageReport[])),
    [canList],
  );
  const [flashing, flash] = useFlash(3_000);
  const refresh = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(refresh.current), []);

  // Live: a start report adds a row, its update (same random_id) changes that row; the charts follow, throttled.
  useLive(['usage.report', 'reset'], (event) => {
    if (event.type === 'reset') {
      stats.reload();
      recent.reload();
      return;
    }
    // Viewers get a summary without the report's fields (no random_id): only the charts follow for them.
    const report = event.data;
    if (canList && 'random_id' in report) {
      recent.update((rows) =>
        rows.some((row) => row.random_id === report.random_id)
          ? rows.map((row) => (row.random_id === report.random_id ? report : row))
          : [report, ...rows].slice(0, 50),
      );
      flash(report.random_id);
    }
    if (!refresh.current) {
      refresh.current = setTimeout(() => {
        refresh.current = undefined;
        stats.reload();
      }, REFRESH_MS);
    }
  });

  const data = stats.data;
  const totals = data ? sumDays(data) : undefined;
  return (
    <section class="usage">
      <PageTitle title="Usage" />
      <p class="hint">
        Installs reported by provisioning scripts over the last {DAYS} days.
        {data?.retention && (
          <span data-testid="retention">
            {' '}
            Reports are kept for {data.retention.max_age_days} days, at most the newest {data.retention.max_reports.toLocaleString('en')}; older ones are deleted daily.
          </span>
        )}
      </p>
      {stats.error && <Notice kind="error">{stats.error}</Notice>}
      {!data && !stats.error && <Loading />}
      {data && totals && totals.all === 0 && <Empty title="No installs reported yet">Point a provisioning script's USAGE_API_BASE at this server's /api/usage.</Empty>}
      {data && totals && totals.all > 0 && (
        <>
          <div class="usage-totals">
            <Total label="Installs" value={totals.all} />
            <Total label="Done" value={totals.done} kind="done" />
            <Total label="Failed" value={totals.failed} kind="failed" />
            <Total label="Stuck (> 1 h)" value={totals.stuck} kind="stuck" />
            <Total label="Failure rate" value={`${pct(totals.failed / Math.max(1, totals.done + totals.failed))}`} />
          </div>
          <div class="card">
            <h2>Installs per day</h2>
            <DailyChart stats={data} />
          </div>
          <div class="usage-grid">
            <div class="card">
              <h2>Top applications</h2>
              <AppsChart stats={data} />
            </div>
            <div class="card">
              <h2>Failure rate per application</h2>
              <table class="usage-rates">
                <tbody>
                  {[...data.apps]
                    .filter((app) => app.failure_rate !== null)
                    .sort((a, b) => (b.failure_rate ?? 0) - (a.failure_rate ?? 0))
                    .slice(0, 10)
                    .map((app) => (
                      <tr key={app.nsapp}>
                        <th scope="row">{app.nsapp || '(none)'}</th>
                        <td class="meter-cell">
                          <span class="meter" style={{ width: `${Math.round((app.failure_rate ?? 0) * 100)}%` }} />
                        </td>
                        <td class="num">{pct(app.failure_rate ?? 0)}</td>
                        <td class="num muted">
                          {app.failed}/{app.done + app.failed}
                        </td>
                      </tr>
                    ))}
                </tbody>
              </table>
            </div>
          </div>
          <div class="card">
            <h2>Most frequent errors</h2>
            {data.errors.length === 0 ? (
              <p class="muted">No failed installs in this period.</p>
            ) : (
              <ol class="usage-errors">
                {data.errors.map((e) => (
                  <li key={e.error}>
                    <span class="count">{e.count}</span> <code>{e.error || '(no error text)'}</code>
                  </li>
                ))}
              </ol>
            )}
          </div>
        </>
      )}
      {canList && (
        <div class="card">
          <h2>Recent reports</h2>
          <p class="hint">Each row is one install: the start report and its status update share a random_id.</p>
          {recent.error && <Notice kind="error">{recent.error}</Notice>}
          {recent.data && recent.data.length === 0 && <p class="muted">No reports yet.</p>}
          {recent.data && recent.data.length > 0 && <ReportTable rows={recent.data} flashing={flashing} />}
        </div>
      )}
    </section>
  );
}

function Total({ label, value, kind }: { label: string; value: number | string; kind?: string }) {
  return (
    <div class={`card total${kind ? ` total-${kind}` : ''}`}>
      <span class="total-label">{label}</span>
      <strong class="total-value">{typeof value === 'number' ? value.toLocaleString('en') : value}</strong>
    </div>
  );
}

function ReportTable({ rows, flashing }: { rows: UsageReport[]; flashing: Set<number | string> }) {
  return (
    <div class="table-wrap">
      <table class="usage-reports" data-testid="usage-reports">
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Application</th>
            <th scope="col">Status</th>
            <th scope="col">Error</th>
            <th scope="col">Updated</th>
            <th scope="col">Type</th>
            <th scope="col">OS</th>
            <th scope="col">Cores · RAM · Disk</th>
            <th scope="col">Method</th>
            <th scope="col">PVE</th>
            <th scope="col">IPv6 off</th>
            <th scope="col">random_id</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.random_id} data-random-id={r.random_id} class={flashing.has(r.random_id) ? 'flash' : undefined}>
              <td>
                <Time iso={r.created_at} exact={false} />
              </td>
              <td>{r.nsapp || <span class="muted">—</span>}</td>
              <td>
                <Badge value={r.status} />
              </td>
              {/* A done install carries part B's default text "No error message": not an error to show in red. */}
              <td class="error-text">{r.status === 'done' ? '' : (r.error ?? '')}</td>
              <td>{r.status !== 'installing' ? <Time iso={r.updated_at} exact={false} /> : <span class="muted">no update yet</span>}</td>
              <td>
                {r.type}
                {r.ct_type !== null ? ` (${r.ct_type === 1 ? 'unprivileged' : 'privileged'})` : ''}
              </td>
              <td>
                {r.os_type} {r.os_version}
              </td>
              <td>
                {r.core_count ?? '—'} · {r.ram_size ?? '—'} MiB · {r.disk_size ?? '—'} GB
              </td>
              <td>{r.method}</td>
              <td>{r.pve_version}</td>
              <td>{r.disableip6}</td>
              <td class="mono" title={r.random_id}>
                {r.random_id.slice(0, 8)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const pct = (x: number) => `${(x * 100).toFixed(x > 0 && x < 0.1 ? 1 : 0)}%`;

function sumDays(stats: UsageStats) {
  const t = { done: 0, failed: 0, stuck: 0, installing: 0, all: 0 };
  for (const d of stats.days) {
    t.done += d.done;
    t.failed += d.failed;
    t.stuck += d.stuck;
    t.installing += d.installing;
  }
  t.all = t.done + t.failed + t.stuck + t.installing;
  return t;
}

/** The page's colours, read from the theme's CSS variables (light or dark). */
function palette() {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string) => css.getPropertyValue(name).trim();
  return { done: v('--ok'), failed: v('--danger'), stuck: v('--warn'), installing: v('--accent'), text: v('--muted'), grid: v('--border') };
}

/** A uPlot chart that follows its container's width. */
function useChart(build: (width: number) => uPlot.Options, data: uPlot.AlignedData, deps: unknown[]) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const plot = new uPlot(build(element.clientWidth || 600), data, element);
    const observer = new ResizeObserver(() => plot.setSize({ width: element.clientWidth || 600, height: plot.height }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  return box;
}

const axis = (colors: ReturnType<typeof palette>, extra: Partial<uPlot.Axis> = {}): uPlot.Axis => ({
  stroke: colors.text,
  grid: { stroke: colors.grid, width: 1 },
  ticks: { stroke: colors.grid, width: 1 },
  ...extra,
});

function DailyChart({ stats }: { stats: UsageStats }) {
  const days = everyDay(stats.days, stats.since, new Date());
  const x = days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
  const layers = ['done', 'failed', 'stuck', 'installing'] as const;
  const raw = layers.map((key) => days.map((d) => d[key]));
  // Stacked: each series is drawn as the running total, biggest first, so the smaller ones sit on top of it.
  const stacked = layers.map((_, i) => days.map((_, j) => raw.slice(0, i + 1).reduce((sum, series) => sum + series[j]!, 0)));
  const order = [3, 2, 1, 0];
  const box = useChart(
    (width) => {
      const colors = palette();
      const bars = uPlot.paths.bars!({ size: [0.8, 40], align: 0 });
      return {
        width,
        height: 260,
        cursor: { points: { show: false } },
        // Bars start at zero: a bar's height is its count.
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.08] } },
        // Days are UTC days, labelled like every other time on the dashboard (uPlot's own are 12-hour local).
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        axes: [axis(colors, { values: (_u, ticks, _axis, _space, increment) => utcTickLabels(ticks, increment) }), axis(colors, { size: 44 })],
        series: [
          { value: (_u, v) => utcLegendTime(v, true) },
          ...order.map((i) => ({
            label: layers[i] === 'stuck' ? 'still installing after 1 h' : layers[i],
            fill: colors[layers[i]!],
            stroke: colors[layers[i]!],
            width: 0,
            paths: bars,
            points: { show: false },
            value: (_u: uPlot, _v: number, _s: number, idx: number | null) => (idx === null ? '—' : String(raw[i]![idx])),
          })),
        ],
      };
    },
    [x, ...order.map((i) => stacked[i]!)],
    [stats],
  );
  return <div class="chart" ref={box} data-testid="daily-chart" />;
}

function AppsChart({ stats }: { stats: UsageStats }) {
  const apps = stats.apps.slice(0, 10);
  const box = useChart(
    (width) => {
      const colors = palette();
      return {
        width,
        height: 260,
        legend: { show: false },
        cursor: { points: { show: false } },
        scales: { x: { time: false, range: [-0.6, apps.length - 0.4] }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.08] } },
        axes: [
          axis(colors, {
            values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? (apps[t]?.nsapp ?? '') : '')),
            rotate: apps.length > 6 ? -30 : 0,
            size: 70,
            splits: () => apps.map((_, i) => i),
            grid: { show: false },
          }),
          axis(colors, { size: 44 }),
        ],
        // Stacked: the total first (unfinished), then done + failed over it, then done over that.
        series: [
          {},
          { label: 'unfinished', fill: colors.stuck, stroke: colors.stuck, width: 0, paths: uPlot.paths.bars!({ size: [0.7, 60] }), points: { show: false } },
          { label: 'failed', fill: colors.failed, stroke: colors.failed, width: 0, paths: uPlot.paths.bars!({ size: [0.7, 60] }), points: { show: false } },
          { label: 'done', fill: colors.done, stroke: colors.done, width: 0, paths: uPlot.paths.bars!({ size: [0.7, 60] }), points: { show: false } },
        ],
      };
    },
    [apps.map((_, i) => i), apps.map((a) => a.total), apps.map((a) => a.done + a.failed), apps.map((a) => a.done)],
    [stats],
  );
  return <div class="chart" ref={box} data-testid="apps-chart" />;
}
