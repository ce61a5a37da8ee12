/**
 * Chart times as the rest of the dashboard shows times (format.ts): 24-hour UTC. uPlot's own labels
 * are 12-hour local time; these replace them on time axes and in legends.
 */
const two = (n: number) => String(n).padStart(2, '0');
const DAY_S = 86_400;

const hm = (d: Date) => `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}`;
const md = (d: Date) => `${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}`;

/**
 * A time axis's labels (unix seconds), for ticks `incrementS` apart: "14:30" within a day, with the
 * date under the first tick and under each midnight ("00:00\n11-23"); "11-23" for ticks a day or more apart.
 */
export function utcTickLabels(ticks: number[], incrementS: number): string[] {
  return ticks.map((t, i) => {
    const d = new Date(t * 1000);
    if (incrementS >= DAY_S) return md(d);
    const midnight = d.getUTCHours() === 0 && d.getUTCMinutes() === 0;
    return i === 0 || midnight ? `${hm(d)}\n${md(d)}` : hm(d);
  });
}

/** One time in a legend or tooltip: "2026-11-22 14:30 UTC" (the date alone for daily data). */
export function utcLegendTime(seconds: number | null | undefined, daily = false): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  const d = new Date(seconds * 1000);
  const date = `${d.getUTCFullYear()}-${md(d)}`;
  return daily ? date : `${date} ${hm(d)} UTC`;
}
