import type { UsageDay } from '../server/contract/usage';

/**
 * Every UTC day from `since` to `today`, in order, with the server's counts where it has any and
 * zeros elsewhere: the chart's time axis then spans the whole period, not only the days with reports.
 */
export function everyDay(days: readonly UsageDay[], since: string, today: Date): UsageDay[] {
  const byDay = new Map(days.map((d) => [d.day, d]));
  const out: UsageDay[] = [];
  const last = today.toISOString().slice(0, 10);
  for (let t = Date.parse(`${since.slice(0, 10)}T00:00:00Z`); ; t += 86_400_000) {
    const day = new Date(t).toISOString().slice(0, 10);
    if (day > last || out.length > 3660) break;
    out.push(byDay.get(day) ?? { day, done: 0, failed: 0, stuck: 0, installing: 0 });
  }
  return out;
}
