import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Field, FormActions, Notice, useLoad } from '../../components/ui';
import type { HostDetail } from '../../../server/contract/hosts';
import type { DeployInput } from '../../../server/contract/inputs/provisioning';
import { STACKS, STATES, type Stack, type State } from '../../../server/contract/instance-fields';
import type { HostMetricsLatest } from '../../../server/contract/metrics';
import { PROXMOX_VMID, VMID_RANGE_TEXT } from '../../vmid';
import { DeployProgress } from './DeployProgress';
import { deployBody, nextVmid, offers, sourceKind, templateSizes, VOLUME, type DeployForm } from './deployForm';

interface Props {
  host: HostDetail;
  metrics: HostMetricsLatest | undefined;
  /** The role reads operation output (`diagnostics.read`): a failed deploy's output is shown. */
  diagnostics: boolean;
}

/** The host page's Deploy button: operators and administrators, disabled with the reason while the host cannot take one. */
export function DeployButton(props: Props) {
  const [open, setOpen] = useState(false);
  const why =
    props.host.status === 'online' ? undefined : props.host.status === 'offline' ? 'The host is offline: deploy once it reports again.' : 'The host is being removed.';
  return (
    <>
      <button type="button" class="primary" disabled={!!why} aria-describedby={why ? 'deploy-why' : undefined} onClick={() => setOpen(true)}>
        Deploy…
      </button>
      {why && (
        <span id="deploy-why" class="muted">
          {why}
        </span>
      )}
      {open && <DeployDialog {...props} onClose={() => setOpen(false)} />}
    </>
  );
}

/**
 * A new guest from one of the host's templates or a container template volume: the form, then the
 * operation's progress in the same dialog. The server's 400 names its fields; each is shown beside its box.
 */
function DeployDialog({ host: h, metrics, diagnostics, onClose }: Props & { onClose: () => void }) {
  const templates = h.guests.filter((g) => g.template);
  const keys = useLoad(() => api('GET /api/server-keys'), []);
  const configs = useLoad(() => api('GET /api/cloud-configs'), []);
  const sizesOf = (source: string) => templateSizes(metrics?.guests.find((m) => String(m.vmid) === source));
  const [form, setForm] = useState<DeployForm>(() => {
    const source = templates[0] ? String(templates[0].vmid) : VOLUME;
    return {
      ...{ source, volume: '', new_vmid: '', name: '', full: true, storage: '', cores: '', ...sizesOf(source) },
      ...{ network: false, bridge: 'vmbr0', vlan: '', dhcp: true, ip: '', gateway: '', ci_user: '', server_key_ids: [], cloud_config_id: '', snippets_storage: 'local' },
      ...{ start: true, state: 'testing', stack: 'development' },
    };
  });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [started, setStarted] = useState<{ operationId: string; vmid: number; network: DeployInput['network'] }>();
  const set = <K extends keyof DeployForm>(key: K, value: DeployForm[K]) => setForm((f) => ({ ...f, [key]: value }));

  // The sizes come with the template's last numbers, which may arrive after the dialog opened.
  const sizesKnown = !!metrics;
  useEffect(() => setForm((f) => (f.memory_mb || f.disk_gb ? f : { ...f, ...sizesOf(f.source) })), [sizesKnown]);
  // "Suggest the next free one": above every vmid the registry and this host know.
  useEffect(() => {
    const suggest = (known: number[]) => setForm((f) => (f.new_vmid ? f : { ...f, new_vmid: String(nextVmid([...known, ...h.guests.map((g) => g.vmid)])) }));
    api('GET /api/instances', { query: { sort: 'vmid', order: 'desc' } }).then(
      (list) => suggest(list.map((i) => i.vmid)),
      () => suggest([]),
    );
  }, []);

  const kind = sourceKind(form, templates);
  const can = offers(kind);

  async function submit(e: Event) {
    e.preventDefault();
    if (busy) return;
    const { body, errors: wrong } = deployBody(form, templates);
    setErrors(wrong);
    setError(undefined);
    if (Object.keys(wrong).length) return;
    setBusy(true);
    try {
      const accepted = await api('POST /api/hosts/:id/deploy', { params: { id: h.id }, body });
      setStarted({ operationId: accepted.operation_id, vmid: body.new_vmid, network: body.network });
    } catch (err) {
      setError(messageOf(err));
      if (err instanceof ApiError) {
        // `server_key_ids.1` (an unknown key) is said beside the keys.
        setErrors(Object.fromEntries(Object.entries(err.fields).map(([field, text]) => [field.replace(/^server_key_ids\.\d+$/, 'server_key_ids'), text])));
      }
    } finally {
      setBusy(false);
    }
  }

  /** A text box for a field; `error`: the key the server's 400 names it by, when that is not the field's own. */
  const input = (id: string, field: keyof DeployForm, { error: key = field, ...extra }: Record<string, string | number> = {}) => (
    <input id={id} autocomplete="off" value={form[field] as string} onInput={(e) => set(field, e.currentTarget.value as never)} aria-invalid={errors[key] ? 'true' : undefined} {...extra} />
  );

  if (started) {
    return (
      <Dialog id="deploy-dialog" title={`Deploy on ${h.hostname}`} onClose={onClose} wide>
        <DeployProgress {...started} diagnostics={diagnostics} />
        <div class="form-actions">
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </Dialog>
    );
  }
  const sourceError = errors.source_vmid ?? (kind === 'volume' ? undefined : errors.source_volume);
  return (
    <Dialog id="deploy-dialog" title={`Deploy on ${h.hostname}`} onClose={onClose} wide>
      <form onSubmit={submit} noValidate aria-label={`Deploy on ${h.hostname}`}>
        <div class="form-grid">
          <Field id="deploy-source" label="Source" error={sourceError} hint={templates.length ? undefined : 'This host reports no template: use a container template volume.'}>
            <select id="deploy-source" value={form.source} onChange={(e) => setForm((f) => ({ ...f, source: e.currentTarget.value, ...sizesOf(e.currentTarget.value) }))}>
              {templates.map((t) => (
                <option key={t.vmid} value={String(t.vmid)}>
                  {t.vmid} “{t.name}” ({t.type === 'qemu' ? 'VM' : 'container'} template)
                </option>
              ))}
              <option value={VOLUME}>A container template volume (pct create)</option>
            </select>
          </Field>
          {kind === 'volume' && (
            <Field id="deploy-volume" label="Container template volume" error={errors.source_volume} hint="Such as local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst">
              {input('deploy-volume', 'volume', { placeholder: 'local:vztmpl/…', error: 'source_volume' })}
            </Field>
          )}
          <Field id="deploy-vmid" label="New VMID" error={errors.new_vmid} hint={`The next free one is suggested; ${VMID_RANGE_TEXT}.`}>
            {input('deploy-vmid', 'new_vmid', { type: 'number', min: PROXMOX_VMID.min, max: PROXMOX_VMID.max, inputMode: 'numeric' })}
          </Field>
          <Field id="deploy-name" label="Name" error={errors.name} hint="A DNS label: lower-case letters, digits and -.">
            {input('deploy-name', 'name')}
          </Field>
        </div>
        {can.full && (
          <label class="check">
            <input type="checkbox" checked={form.full} onChange={(e) => set('full', e.currentTarget.checked)} /> full clone (a linked clone shares the template’s disks and stays on its storage)
          </label>
        )}
        <div class="form-grid">
          {((can.full && form.full) || kind === 'volume') && (
            <Field id="deploy-storage" label={kind === 'volume' ? 'Root disk storage' : 'Storage'} error={errors.storage} hint="Empty: the template’s.">
              {input('deploy-storage', 'storage', { placeholder: 'local-lvm' })}
            </Field>
          )}
          <Field id="deploy-cores" label="Cores" error={errors.cores} hint="Empty: the template’s.">
            {input('deploy-cores', 'cores', { type: 'number', min: 1, max: 128, inputMode: 'numeric' })}
          </Field>
          <Field id="deploy-memory" label="Memory (MiB)" error={errors.memory_mb} hint="Pre-filled from the template.">
            {input('deploy-memory', 'memory_mb', { type: 'number', min: 64, inputMode: 'numeric', error: 'memory_mb' })}
          </Field>
          <Field id="deploy-disk" label="Disk (GiB)" error={errors.disk_gb} hint="Pre-filled from the template; the boot disk only grows.">
            {input('deploy-disk', 'disk_gb', { type: 'number', min: 1, inputMode: 'numeric', error: 'disk_gb' })}
          </Field>
        </div>
        <label class="check">
          <input type="checkbox" checked={form.network} onChange={(e) => set('network', e.currentTarget.checked)} /> set the network (otherwise the template’s is kept)
        </label>
        {form.network && (
          <div class="form-grid">
            <Field id="deploy-bridge" label="Bridge" error={errors['network.bridge']}>
              {input('deploy-bridge', 'bridge', { error: 'network.bridge' })}
            </Field>
            <Field id="deploy-vlan" label="VLAN" error={errors['network.vlan']} hint="Empty: untagged.">
              {input('deploy-vlan', 'vlan', { type: 'number', min: 1, max: 4094, inputMode: 'numeric', error: 'network.vlan' })}
            </Field>
            <fieldset class="field">
              <legend>Address</legend>
              <label class="check">
                <input type="radio" name="deploy-addressing" checked={form.dhcp} onChange={() => set('dhcp', true)} /> DHCP
              </label>
              <label class="check">
                <input type="radio" name="deploy-addressing" checked={!form.dhcp} onChange={() => set('dhcp', false)} /> static
              </label>
            </fieldset>
            {!form.dhcp && (
              <>
                <Field id="deploy-ip" label="Static address (a.b.c.d/nn)" error={errors['network.ip']}>
                  {input('deploy-ip', 'ip', { placeholder: '192.0.2.30/24', error: 'network.ip' })}
                </Field>
                <Field id="deploy-gateway" label="Gateway" error={errors['network.gateway']}>
                  {input('deploy-gateway', 'gateway', { placeholder: '192.0.2.1', error: 'network.gateway' })}
                </Field>
              </>
            )}
          </div>
        )}
        {can.cloudInit && (
          <Field id="deploy-ci-user" label="Cloud-init user" error={errors.ci_user} hint="Empty: the template’s.">
            {input('deploy-ci-user', 'ci_user', { error: 'ci_user' })}
          </Field>
        )}
        {can.keys && (
          <fieldset class="field" data-testid="deploy-keys">
            <legend>Server keys</legend>
            {keys.error && <Notice kind="error">{keys.error}</Notice>}
            {keys.data?.length === 0 && <p class="hint">No server key is saved: an administrator adds them in Settings → Server keys.</p>}
            {keys.data?.map((k) => (
              <label class="check" key={k.id}>
                <input
                  type="checkbox"
                  checked={form.server_key_ids.includes(k.id)}
                  onChange={(e) => set('server_key_ids', e.currentTarget.checked ? [...form.server_key_ids, k.id] : form.server_key_ids.filter((id) => id !== k.id))}
                />{' '}
                <strong>{k.name}</strong> <span class="mono muted">{k.fingerprint}</span>
              </label>
            ))}
            {errors.server_key_ids && <p class="field-error">{errors.server_key_ids}</p>}
          </fieldset>
        )}
        {can.cloudInit && (
          <div class="form-grid">
            <Field id="deploy-cloud-config" label="Cloud config" error={errors.cloud_config_id}>
              <select id="deploy-cloud-config" value={form.cloud_config_id} onChange={(e) => set('cloud_config_id', e.currentTarget.value)}>
                <option value="">none</option>
                {configs.data?.map((c) => (
                  <option key={c.id} value={String(c.id)}>
                    {c.name}
                  </option>
                ))}
              </select>
            </Field>
            {form.cloud_config_id && (
              <Field id="deploy-snippets" label="Snippets storage" error={errors.snippets_storage} hint="A storage with snippets content; the config is written there.">
                {input('deploy-snippets', 'snippets_storage', { error: 'snippets_storage' })}
              </Field>
            )}
          </div>
        )}
        <div class="form-grid">
          <Field id="deploy-state" label="State" error={errors.state}>
            <select id="deploy-state" value={form.state} onChange={(e) => set('state', e.currentTarget.value as State)}>
              {STATES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </Field>
          <Field id="deploy-stack" label="Stack" error={errors.stack}>
            <select id="deploy-stack" value={form.stack} onChange={(e) => set('stack', e.currentTarget.value as Stack)}>
              {STACKS.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </Field>
        </div>
        <label class="check">
          <input type="checkbox" checked={form.start} onChange={(e) => set('start', e.currentTarget.checked)} /> start it once deployed
        </label>
        {error && <Notice kind="error">{error}</Notice>}
        <FormActions submit={busy ? 'Deploying…' : 'Deploy'} cancel={onClose} />
      </form>
    </Dialog>
  );
}
