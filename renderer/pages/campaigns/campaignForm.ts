import type { CampaignSummary, CampaignTarget } from '../../../server/contract/campaigns';
import type { CampaignRequest } from '../../../server/contract/inputs/campaigns';

/** The New campaign dialog's boxes, as typed. */
export interface CampaignForm {
  name: string;
  targetKind: 'vmids' | 'host_ids' | 'collection_id';
  /** Guest ids or host ids, separated by spaces or commas; or the collection picked (its id). */
  targetText: string;
  stepKind: 'guest.action' | 'script' | 'agent.upgrade';
  action: 'start' | 'shutdown' | 'stop' | 'reboot' | 'snapshot' | 'rollback' | 'destroy';
  /** The snapshot's name (snapshot) or the one to roll back to (rollback). */
  snapshot: string;
  /** The script picked (its id). */
  scriptId: string;
  version: string;
  waveSize: string;
  pauseS: string;
  maxFailures: string;
  respectMaintenance: boolean;
  windowWaitH: string;
}

export const BLANK_FORM: CampaignForm = {
  name: '',
  targetKind: 'vmids',
  targetText: '',
  stepKind: 'guest.action',
  action: 'reboot',
  snapshot: '',
  scriptId: '',
  version: '',
  waveSize: '1',
  pauseS: '0',
  maxFailures: '0',
  respectMaintenance: true,
  windowWaitH: '24',
};

type Body = CampaignRequest;

const whole = (text: string) => (/^\s*\d+\s*$/.test(text) ? Number(text) : NaN);

/**
 * The body of POST /api/campaigns from the form, or the boxes that cannot make one (keyed as the
 * server names its fields). What the server checks besides (ranges, known hosts) it says itself.
 */
export function campaignBody(form: CampaignForm): { body?: Body; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const ids = form.targetText.split(/[\s,]+/).filter(Boolean);
  const numbers = ids.map(whole);
  if (!form.name.trim()) errors.name = 'Give the campaign a name.';
  if (form.targetKind === 'collection_id' && ids.length === 0) errors.target = 'Pick a collection.';
  else if (ids.length === 0 || numbers.some(Number.isNaN)) errors.target = 'List ids as whole numbers, separated by spaces or commas.';
  else if (form.targetKind === 'collection_id' && ids.length !== 1) errors.target = 'Name one collection.';
  const target = form.targetKind === 'collection_id' ? { collection_id: numbers[0]! } : form.targetKind === 'vmids' ? { vmids: numbers } : { host_ids: numbers };
  let step: Record<string, unknown>;
  if (form.stepKind === 'guest.action') {
    step = { type: 'guest.action', action: form.action };
    if (form.action === 'snapshot' || form.action === 'rollback') {
      if (!form.snapshot.trim()) errors['step.name'] = 'Name the snapshot.';
      step[form.action === 'snapshot' ? 'name' : 'snapshot'] = form.snapshot.trim();
    }
  } else if (form.stepKind === 'script') {
    if (Number.isNaN(whole(form.scriptId))) errors['step.script_id'] = 'Pick a script.';
    step = { type: 'script', script_id: whole(form.scriptId) };
  } else {
    step = { type: 'agent.upgrade', ...(form.version.trim() ? { version: form.version.trim() } : {}) };
  }
  const numbersOf: [keyof CampaignForm, 'wave_size' | 'pause_s' | 'max_failures'][] = [
    ['waveSize', 'wave_size'],
    ['pauseS', 'pause_s'],
    ['maxFailures', 'max_failures'],
  ];
  const body: Record<string, unknown> = { name: form.name.trim(), target, step, respect_maintenance: form.respectMaintenance };
  for (const [box, field] of numbersOf) {
    const value = whole(String(form[box]));
    if (Number.isNaN(value)) errors[field] = 'Give a whole number.';
    body[field] = value;
  }
  const wait = Number(form.windowWaitH);
  if (form.windowWaitH.trim() === '' || !Number.isFinite(wait)) errors.window_wait_h = 'Give a number of hours.';
  body.window_wait_h = wait;
  return Object.keys(errors).length ? { errors } : { body: body as unknown as Body, errors };
}

/**
 * What the campaign does, in a few words: "reboot", "snapshot “pre”", "script “patch-web”",
 * "agent upgrade to 1.4.0". A script is named from `scripts` (id → name); one not there (deleted
 * since, or the list not read yet) by its number.
 */
export function stepWords(step: CampaignSummary['step'], scripts?: ReadonlyMap<number, string>): string {
  if (step.type === 'guest.action') return step.action === 'snapshot' ? `snapshot “${step.name}”` : step.action === 'rollback' ? `rollback to “${step.snapshot}”` : step.action;
  if (step.type === 'script') {
    const name = scripts?.get(step.script_id);
    return name === undefined ? `script #${step.script_id}` : `script “${name}”`;
  }
  return step.version ? `agent upgrade to ${step.version}` : 'agent upgrade along each host’s channel';
}

/** A target as a row names it: "101 “web”", or the host's name for a host itself. */
export const targetWords = (t: Pick<CampaignTarget, 'vmid' | 'name'>): string => (t.vmid === null ? t.name : t.name ? `${t.vmid} “${t.name}”` : String(t.vmid));

/** How long it took, in words: "42 s", "3 min 5 s", "1 h 2 min". */
export function took(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  return `${Math.floor(s / 3600)} h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
}

/** The line a finished campaign ends with: how long it took and what failed. */
export function finishedWords(c: Pick<CampaignSummary, 'status' | 'duration_s' | 'counts'>, targets: Pick<CampaignTarget, 'status' | 'vmid' | 'name' | 'reason'>[]): string | undefined {
  if (c.duration_s === null) return undefined;
  const failed = targets.filter((t) => t.status === 'failed');
  const what = c.status === 'cancelled' ? 'Cancelled' : c.status === 'failed' ? 'Stopped' : 'Done';
  const failures = failed.length ? ` ${failed.length} failed: ${failed.map((t) => `${targetWords(t)} (${t.reason ?? 'failed'})`).join(', ')}.` : ' Nothing failed.';
  const skipped = c.counts.skipped ? ` ${c.counts.skipped} skipped.` : '';
  return `${what} after ${took(c.duration_s)}.${failures}${skipped}`;
}
