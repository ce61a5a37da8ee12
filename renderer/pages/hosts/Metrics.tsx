import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { api } from '../../api';
import { Notice } from '../../components/ui';
import { useCoalesced, useLive } from '../../live';
import { utcLegendTime, utcTickLabels } from '../../chartTime';
import type { HostSeries, MetricPoint, MetricsAnswer } from '../../../server/contract/metrics';

// Its own chunk (the host page loads it with import()), so uPlot is fetched only when charts show.

const RANGES = [
  { key: '1h', label: '1 h', ms: 3_600_000 },
  { key: '24h', label: '24 h', ms: 86_400_000 },
  { key: '7d', label: '7 d', ms: 7 * 86_400_000 },
  { key: '30d', label: '30 d', ms: 30 * 86_400_000 },
] as const;
type RangeKey = (typeof RANGES)[number]['key'];

const SERIES: HostSeries[] = ['cpu', 'mem_used', 'mem_total', 'disk_used', 'disk_total', 'net_rx', 'net_tx'];

function bytes(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) (v /= 1024), i++;
  return `${v.toFixed(v >= 100 || i === 0 ? 0 : 1)} ${units[i]}`;
}

function palette() {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string) => css.getPropertyValue(name).trim();
  return { a: v('--accent'), b: v('--ok'), c: v('--warn'), text: v('--muted'), grid: v('--border') };
}

interface ChartSpec {
  title: string;
  testid: string;
  /** Each bucket's average (or, with `peak`, its maximum: a drawn-through dashed line). */
  lines: { label: string; series: HostSeries; color: 'a' | 'b' | 'c'; peak?: true }[];
  value: (v: number) => string;
  /** Fixed y range (CPU in %), else from the data. */
  range?: [number, number];
}

const CHARTS: ChartSpec[] = [
  {
    title: 'CPU',
    testid: 'chart-cpu',
    // An hour's or a day's average hides a burst: the bucket's peak is drawn with it.
    lines: [{ label: 'average', series: 'cpu', color: 'a' }, { label: 'peak', series: 'cpu', color: 'c', peak: true }],
    value: (v) => `${(v * 100).toFixed(1)}%`,
    range: [0, 1],
  },
  { title: 'Memory', testid: 'chart-memory', lines: [{ label: 'used', series: 'mem_used', color: 'a' }, { label: 'total', series: 'mem_total', color: 'c' }], value: bytes },
  { title: 'Root disk', testid: 'chart-disk', lines: [{ label: 'used', series: 'disk_used', color: 'a' }, { label: 'total', series: 'disk_total', color: 'c' }], value: bytes },
  { title: 'Network', testid: 'chart-network', lines: [{ label: 'in', series: 'net_rx', color: 'b' }, { label: 'out', series: 'net_tx', color: 'a' }], value: (v) => `${bytes(v)}/s` },
];

/** One chart: the average (or peak) of each bucket, over the times every line shares. */
function Chart({ spec, answer }: { spec: ChartSpec; answer: MetricsAnswer }) {
  const box = useRef<HTMLDivElement>(null);
  const times = [...new Set(spec.lines.flatMap((l) => (answer.series[l.series] ?? []).map((p) => p[0])))].sort((x, y) => x - y);
  const data: uPlot.AlignedData = [
    times,
    ...spec.lines.map((l) => {
      const at = new Map((answer.series[l.series] ?? []).map((p: MetricPoint) => [p[0], l.peak ? p[2] : p[1]]));
      return times.map((t) => at.get(t) ?? null);
    }),
  ];
  const last = spec.lines.map((l) => (answer.series[l.series] ?? []).at(-1)?.[l.peak ? 2 : 1]);
  useEffect(() => {
    const element = box.current;
    if (!element || times.length === 0) return;
    const colors = palette();
    const axis = (extra: Partial<uPlot.Axis> = {}): uPlot.Axis => ({ stroke: colors.text, grid: { stroke: colors.grid, width: 1 }, ticks: { stroke: colors.grid, width: 1 }, ...extra });
    const plot = new uPlot(
      {
        width: element.clientWidth || 400,
        height: 160,
        legend: { show: false },
        // 24-hour UTC like every other time on the dashboard (uPlot's own are 12-hour local).
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        // The whole range asked for, not just where points are: an hour with one bucket still reads as an hour.
        scales: { x: { time: true, range: (): uPlot.Range.MinMax => [Date.parse(answer.from) / 1000, Date.parse(answer.to) / 1000] }, y: spec.range ? { range: spec.range } : { range: (_u, min, max) => [0, Math.max(max, min + 1) * 1.05] } },
        axes: [
          axis({
            values: (_u, ticks, _axis, _space, increment) => {
              const labels = utcTickLabels(ticks, increment);
              // What the canvas shows, readable by people's tools and the browser tests.
              element.dataset.xLabels = labels.join('|');
              return labels;
            },
          }),
          axis({ size: 84, values: (_u, ticks) => ticks.map(spec.value) }),
        ],
        series: [{ value: (_u, v) => utcLegendTime(v) }, ...spec.lines.map((l) => ({ label: l.label, stroke: colors[l.color], width: l.peak ? 1 : 2, ...(l.peak ? { dash: [4, 3] } : {}), points: { show: times.length < 3 }, spanGaps: false }))],
      },
      data,
      element,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: element.clientWidth || 400, height: 160 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [answer]);
  return (
    <div class="metric-chart" data-testid={spec.testid} data-points={times.length}>
      <h3>
        {spec.title}{' '}
        <span class="muted">
          {spec.lines.map((l, i) => (last[i] === undefined ? null : <span key={l.label}> {spec.lines.length > 1 ? `${l.label} ` : ''}{spec.value(last[i]!)}</span>))}
        </span>
      </h3>
      {times.length === 0 ? (
        <p class="chart-empty" data-testid="no-data">
          no data yet
        </p>
      ) : (
        <div ref={box} data-testid="plot" />
      )}
    </div>
  );
}

/** The host page's charts: CPU, memory, disk, network over 1 h to 30 d, refreshed as heartbeats bring numbers. */
export function HostCharts({ hostId }: { hostId: number }) {
  const [range, setRange] = useState<RangeKey>('1h');
  const [answer, setAnswer] = useState<MetricsAnswer>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    const ms = RANGES.find((r) => r.key === range)!.ms;
    const from = new Date(Date.now() - ms).toISOString();
    api('GET /api/hosts/:id/metrics', { params: { id: hostId }, query: { from, series: SERIES.join(',') } }).then(
      (a) => live && (setAnswer(a), setError(undefined)),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [hostId, range, tick]);

  // A heartbeat with numbers: read again, at most every 2 s however many arrive.
  const reread = useCoalesced(() => setTick((t) => t + 1), 2_000);
  useLive(['host.metrics'], ({ data }) => {
    if (data.host_id === hostId) reread();
  });

  const empty = answer && SERIES.every((s) => (answer.series[s] ?? []).length === 0);
  return (
    <div class="card">
      <div class="chart-head">
        <h2>Metrics</h2>
        <div class="segmented" role="group" aria-label="Time range">
          {RANGES.map((r) => (
            <button key={r.key} type="button" aria-pressed={range === r.key} onClick={() => setRange(r.key)}>
              {r.label}
            </button>
          ))}
        </div>
      </div>
      {error && <Notice kind="error">{error}</Notice>}
      {empty && <p class="muted">No numbers reported in this range yet. An agent sends them with each heartbeat.</p>}
      {answer && (
        <div class="charts" data-testid="charts" data-step={answer.step_s}>
          {CHARTS.map((spec) => (
            <Chart key={spec.testid} spec={spec} answer={answer} />
          ))}
        </div>
      )}
    </div>
  );
}
