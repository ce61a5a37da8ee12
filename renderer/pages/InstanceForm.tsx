import { useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api';
import { Field, Loading, Notice, PageTitle, useLoad } from '../components/ui';
import { navigate } from '../router';
import { FLAGS, STACKS, STATES, type PlacedInstance as Instance } from '../../server/contract/registry';
import { isProxmoxVmid, VMID_RANGE_TEXT } from '../vmid';
import { parseTagText } from '../query';

type Draft = Record<string, string | number>;

const BLANK: Draft = { vmid: '', name: '', state: 'deployed', stack: 'development', tailscale_ip: '', ...Object.fromEntries(FLAGS.map((f) => [f, 0])), tags: '' };

/** A VMID is sent as a number when it looks like one; anything else goes as typed so the server names the problem. */
function toBody(draft: Draft): Record<string, unknown> {
  const vmid = String(draft.vmid).trim();
  // Tags are typed in one box; what cannot be a tag is sent as typed, and the server names it.
  return { ...draft, vmid: /^-?\d+$/.test(vmid) ? Number(vmid) : vmid === '' ? undefined : vmid, tags: parseTagText(String(draft.tags ?? '')).tags };
}

/** A whole number above 0 (which the registry takes) that Proxmox never gives a guest: warned, not refused. */
function neverProxmox(value: string | number): boolean {
  const text = String(value).trim();
  return /^\d+$/.test(text) && Number(text) > 0 && !isProxmoxVmid(Number(text));
}

export function InstanceFormPage({ vmid }: { vmid?: string }) {
  const existing = useLoad(() => (vmid ? api('GET /api/instances/:vmid', { params: { vmid } }) : Promise.resolve(undefined)), [vmid]);
  if (vmid && existing.error) return <Notice kind="error">{existing.error}</Notice>;
  if (vmid && !existing.data) return <Loading />;
  return <InstanceForm key={vmid ?? 'new'} existing={existing.data} />;
}

function InstanceForm({ existing }: { existing: Instance | undefined }) {
  const [draft, setDraft] = useState<Draft>(() => (existing ? pick(existing) : { ...BLANK }));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const set = (field: string, value: string | number) => setDraft((d) => ({ ...d, [field]: value }));

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setErrors({});
    try {
      const saved = existing
        ? await api('PUT /api/instances/:vmid', { params: { vmid: existing.vmid }, body: toBody(draft) })
        : await api('POST /api/instances', { body: toBody(draft) });
      navigate(`/instances/${saved.vmid}`);
    } catch (e) {
      if (e instanceof ApiError && Object.keys(e.fields).length) {
        // `tags.2` names one tag of the list: shown beside the one box.
        const tagError = Object.entries(e.fields).find(([field]) => field.startsWith('tags.'));
        setErrors(tagError && !e.fields.tags ? { ...e.fields, tags: `“${parseTagText(String(draft.tags)).tags[Number(tagError[0].slice(5))] ?? 'a tag'}” ${tagError[1]}` } : e.fields);
        setError('Some fields need attention.');
      } else if (e instanceof ApiError && e.status === 409) {
        setErrors({ vmid: 'is already used by another instance' });
        setError(/vmid already exists/i.test(e.message) ? `An instance with VMID ${String(draft.vmid).trim()} already exists.` : e.message);
      } else setError(messageOf(e));
      setBusy(false);
    }
  }

  const input = (field: string, props: Record<string, unknown> = {}) => (
    <input
      id={field}
      name={field}
      value={String(draft[field] ?? '')}
      onInput={(e) => set(field, e.currentTarget.value)}
      aria-invalid={errors[field] ? 'true' : undefined}
      aria-describedby={errors[field] ? `${field}-error` : undefined}
      {...props}
    />
  );
  const select = (field: string, options: readonly string[]) => (
    <select
      id={field}
      name={field}
      value={String(draft[field])}
      onChange={(e) => set(field, e.currentTarget.value)}
      aria-invalid={errors[field] ? 'true' : undefined}
      aria-describedby={errors[field] ? `${field}-error` : undefined}
    >
      {options.map((option) => (
        <option value={option}>{option}</option>
      ))}
    </select>
  );

  return (
    <form class="card form" onSubmit={submit} noValidate>
      <p class="crumbs">
        <a href="/instances">Instances</a> / {existing ? <a href={`/instances/${existing.vmid}`}>{existing.vmid}</a> : 'new'}
      </p>
      <PageTitle title={existing ? `Edit ${existing.name}` : 'New instance'} />
      {error && <Notice kind="error">{error}</Notice>}
      <div class="form-grid">
        <Field id="vmid" label="VMID" error={errors.vmid} hint="A positive whole number, unique.">
          {input('vmid', { inputMode: 'numeric', autocomplete: 'off' })}
          {!errors.vmid && neverProxmox(draft.vmid ?? '') && (
            <p class="field-warning" id="vmid-warning" role="status">
              Proxmox numbers guests {VMID_RANGE_TEXT}: no host can ever report this one. It is saved anyway.
            </p>
          )}
        </Field>
        <Field id="name" label="Name" error={errors.name}>
          {input('name', { autocomplete: 'off' })}
        </Field>
        <Field id="state" label="State" error={errors.state}>
          {select('state', STATES)}
        </Field>
        <Field id="stack" label="Stack" error={errors.stack} hint="Production instances cannot be deleted.">
          {select('stack', STACKS)}
        </Field>
        <Field id="tailscale_ip" label="Tailscale IP" error={errors.tailscale_ip} hint="An IPv4 address, or empty.">
          {input('tailscale_ip', { autocomplete: 'off', class: 'mono' })}
        </Field>
        <Field id="tags" label="Tags" error={errors.tags} hint="Up to 16, separated by commas or spaces: letters, digits, _ . -">
          {input('tags', { autocomplete: 'off' })}
        </Field>
        {existing && (
          // Shown, never sent: the Tailscale sync job keeps it (the registry API ignores it).
          <Field id="tailscale_ipv6" label="Tailnet IPv6" hint="Read-only: the Tailscale sync job sets it from the matched device.">
            <output id="tailscale_ipv6" class="mono address" aria-describedby="tailscale_ipv6-hint">
              {existing.tailscale_ipv6 ?? <span class="muted">— (no device matched)</span>}
            </output>
          </Field>
        )}
      </div>
      <fieldset class="flag-set">
        <legend>Services</legend>
        {FLAGS.map((flag) => (
          <label class="check" key={flag}>
            <input type="checkbox" name={flag} checked={draft[flag] === 1} onChange={(e) => set(flag, e.currentTarget.checked ? 1 : 0)} />
            {flag.replace('_', ' ')}
            {errors[flag] && <span class="field-error"> {errors[flag]}</span>}
          </label>
        ))}
      </fieldset>
      <div class="form-actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Saving…' : existing ? 'Save changes' : 'Create instance'}
        </button>
        <a class="button" href={existing ? `/instances/${existing.vmid}` : '/instances'}>
          Cancel
        </a>
      </div>
    </form>
  );
}

function pick(instance: Instance): Draft {
  const draft: Draft = {};
  for (const field of Object.keys(BLANK)) draft[field] = (instance as unknown as Draft)[field] ?? BLANK[field]!;
  draft.tags = instance.tags.join(', ');
  return draft;
}
