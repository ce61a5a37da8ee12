import { useMemo, useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Field, Notice, useLoad } from '../../components/ui';
import type { CampaignPlan, PlannedTarget } from '../../../server/contract/campaigns';
import { BLANK_FORM, campaignBody, targetWords, type CampaignForm } from './campaignForm';

const ACTIONS: CampaignForm['action'][] = ['reboot', 'shutdown', 'stop', 'start', 'snapshot', 'rollback', 'destroy'];

/**
 * New campaign: the form, then its dry run (the waves and what is skipped, with why) shown before
 * the Start button; changing anything asks for a new preview, so what starts is what was shown.
 */
export function NewCampaignDialog(props: { onClose: () => void; onStarted: (id: number) => void }) {
  const [form, setForm] = useState<CampaignForm>(BLANK_FORM);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [plan, setPlan] = useState<CampaignPlan>();
  const [message, setMessage] = useState<string>();
  const [busy, setBusy] = useState(false);
  // Collections and scripts are picked by name; the body names them by id.
  const collections = useLoad(() => api('GET /api/collections'), []);
  const scripts = useLoad(() => api('GET /api/scripts'), []);
  // The preview names each guest's host, so a wave's spread over the hosts shows before Start.
  const hosts = useLoad(() => api('GET /api/hosts'), []);
  const hostNames = useMemo(() => new Map((hosts.data ?? []).map((h) => [h.id, h.hostname])), [hosts.data]);
  const shown = (t: PlannedTarget) => {
    const host = t.vmid === null || t.host_id === null ? undefined : hostNames.get(t.host_id);
    return host ? `${targetWords(t)} on ${host}` : targetWords(t);
  };
  const set = (patch: Partial<CampaignForm>) => {
    setForm((f) => ({ ...f, ...patch }));
    setPlan(undefined);
  };

  async function send(dryRun: boolean) {
    const { body, errors: local } = campaignBody(form);
    setErrors(local);
    setMessage(undefined);
    if (!body) return;
    setBusy(true);
    try {
      if (dryRun) setPlan((await api('POST /api/campaigns', { query: { dry_run: 'true' }, body })) as CampaignPlan);
      else props.onStarted(((await api('POST /api/campaigns', { body })) as { id: number }).id);
    } catch (e) {
      setErrors(e instanceof ApiError ? e.fields : {});
      setMessage(messageOf(e));
    } finally {
      setBusy(false);
    }
  }

  const input = (id: string, key: keyof CampaignForm, extra: Record<string, unknown> = {}) => (
    <input id={id} value={String(form[key])} aria-invalid={errors[id.replace('campaign-', '')] ? true : undefined} onInput={(e) => set({ [key]: e.currentTarget.value } as Partial<CampaignForm>)} {...extra} />
  );
  const targets = plan?.waves.reduce((n, w) => n + w.length, 0) ?? 0;
  return (
    <Dialog id="campaign-dialog" title="New campaign" onClose={props.onClose} wide>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void send(true);
        }}
      >
        <Field id="campaign-name" label="Name" error={errors.name}>
          {input('campaign-name', 'name')}
        </Field>
        <Field
          id="campaign-target"
          label="Targets"
          error={errors.target ?? errors['target.vmids'] ?? errors['target.host_ids'] ?? errors['target.collection_id']}
          hint={form.targetKind === 'collection_id' ? 'The instances it matches when the campaign starts.' : 'Ids separated by spaces or commas.'}
        >
          <select aria-label="Target kind" value={form.targetKind} onChange={(e) => set({ targetKind: e.currentTarget.value as CampaignForm['targetKind'], targetText: '' })}>
            <option value="vmids">guests (VMIDs)</option>
            <option value="host_ids">hosts (every guest, or the host itself)</option>
            <option value="collection_id">a collection</option>
          </select>
          {form.targetKind === 'collection_id' ? (
            <select id="campaign-target" aria-label="Collection" value={form.targetText} onChange={(e) => set({ targetText: e.currentTarget.value })}>
              <option value="">{collections.data?.length === 0 ? 'no collections yet' : 'pick a collection'}</option>
              {collections.data?.map((c) => (
                <option key={c.id} value={String(c.id)}>
                  {c.name} ({c.count} instance{c.count === 1 ? '' : 's'})
                </option>
              ))}
            </select>
          ) : (
            input('campaign-target', 'targetText')
          )}
        </Field>
        <Field id="campaign-step" label="Step" error={errors.step ?? errors['step.action']}>
          <select id="campaign-step" value={form.stepKind} onChange={(e) => set({ stepKind: e.currentTarget.value as CampaignForm['stepKind'] })}>
            <option value="guest.action">guest action</option>
            <option value="script">script</option>
            <option value="agent.upgrade">agent upgrade</option>
          </select>
        </Field>
        {form.stepKind === 'guest.action' && (
          <Field id="campaign-action" label="Action">
            <select id="campaign-action" value={form.action} onChange={(e) => set({ action: e.currentTarget.value as CampaignForm['action'] })}>
              {ACTIONS.map((a) => (
                <option key={a} value={a}>
                  {a}
                </option>
              ))}
            </select>
          </Field>
        )}
        {form.stepKind === 'guest.action' && (form.action === 'snapshot' || form.action === 'rollback') && (
          <Field id="campaign-snapshot" label="Snapshot name" error={errors['step.name'] ?? errors['step.snapshot']}>
            {input('campaign-snapshot', 'snapshot')}
          </Field>
        )}
        {form.stepKind === 'script' && (
          <Field id="campaign-script" label="Script" error={errors['step.script_id']} hint="A host script runs on the hosts named (only those installed with --allow-scripts); a guest script in each guest.">
            <select id="campaign-script" value={form.scriptId} onChange={(e) => set({ scriptId: e.currentTarget.value })}>
              <option value="">{scripts.data?.length === 0 ? 'no scripts yet' : 'pick a script'}</option>
              {scripts.data?.map((s) => (
                <option key={s.id} value={String(s.id)}>
                  {s.name} (runs on the {s.runs_on}, {s.interpreter})
                </option>
              ))}
            </select>
          </Field>
        )}
        {form.stepKind === 'agent.upgrade' && (
          <Field id="campaign-version" label="Agent version" error={errors['step.version']} hint="Empty: the newest on each host's channel (pinned hosts are left alone).">
            {input('campaign-version', 'version')}
          </Field>
        )}
        <div class="field-row">
          <Field id="campaign-wave" label="Wave size" error={errors.wave_size}>
            {input('campaign-wave', 'waveSize', { inputMode: 'numeric' })}
          </Field>
          <Field id="campaign-pause" label="Pause between waves (s)" error={errors.pause_s}>
            {input('campaign-pause', 'pauseS', { inputMode: 'numeric' })}
          </Field>
          <Field id="campaign-failures" label="Failures allowed" error={errors.max_failures}>
            {input('campaign-failures', 'maxFailures', { inputMode: 'numeric' })}
          </Field>
          <Field id="campaign-wait" label="Wait for a host or window (h)" error={errors.window_wait_h}>
            {input('campaign-wait', 'windowWaitH', { inputMode: 'decimal' })}
          </Field>
        </div>
        <label class="check">
          <input type="checkbox" checked={form.respectMaintenance} onChange={(e) => set({ respectMaintenance: e.currentTarget.checked })} /> wait for the hosts’ maintenance windows
        </label>
        {message && <Notice kind="error">{message}</Notice>}
        <div class="form-actions">
          <button type="submit" class={plan ? '' : 'primary'} disabled={busy}>
            Preview
          </button>
          {plan && plan.waves.length > 0 && (
            <button type="button" class="primary" disabled={busy} onClick={() => void send(false)}>
              Start
            </button>
          )}
        </div>
      </form>
      {plan && (
        <div class="campaign-preview" data-testid="campaign-preview">
          <p>
            {targets} target{targets === 1 ? '' : 's'} in {plan.waves.length} wave{plan.waves.length === 1 ? '' : 's'}
            {plan.skipped.length ? `, ${plan.skipped.length} skipped` : ''}.
          </p>
          <ol class="waves">
            {plan.waves.map((wave, i) => (
              <li key={i} data-testid="preview-wave">
                {wave.map(shown).join(', ')}
              </li>
            ))}
          </ol>
          {plan.skipped.length > 0 && (
            <ul class="plain" data-testid="preview-skipped">
              {plan.skipped.map((t, i) => (
                <li key={i}>
                  {shown(t)}: {t.reason}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </Dialog>
  );
}
