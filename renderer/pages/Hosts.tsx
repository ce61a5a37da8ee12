import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api';
import { Confirm, CopyButton, Empty, Field, Loading, Notice, PageTitle, Time, useLoad } from '../components/ui';
import { plural, uptime } from '../format';
import { useFlash, useLive } from '../live';
import { navigate } from '../router';
import { useSession } from '../session';
import type { DriftItem, HostDetail, HostSummary } from '../../server/hosts/schema';
import type { HostEvent } from '../../server/hosts/service';

/** Re-reads at most once per `ms`, however many events ask for it: a fleet of hosts heartbeats often. */
function useCoalesced(reload: () => void, ms = 300): () => void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return () => {
    if (timer.current !== undefined) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      reload();
    }, ms);
  };
}

/** What a host event says, laid over a loaded host: status, last heartbeat, agent version. */
const withEvent = <T extends HostSummary>(host: T, event: HostEvent): T => ({
  ...host,
  status: event.status,
  last_heartbeat_at: event.last_heartbeat_at,
  agent_version: event.agent_version,
});

/**
 * Live hosts (issue 12): a `host.heartbeat` or `host.status` event updates the status dot, last
 * heartbeat and agent version at once; guests and drift are not in the event, so the page re-reads
 * them (coalesced). Registry changes move drift too. `reset` (missed events) re-reads everything.
 */
function useLiveHosts(
  concerns: (id: number) => boolean,
  update: (event: HostEvent) => boolean,
  reload: () => void,
  flash?: (key: number) => void,
): void {
  const reread = useCoalesced(reload);
  useLive(['host.heartbeat', 'host.status'], (event: HostEvent) => {
    if (!concerns(event.id)) return;
    // An event for a host the page has not loaded (just enrolled) is a reason to re-read.
    if (update(event)) flash?.(event.id);
    reread();
  });
  useLive(['instance.created', 'instance.updated', 'instance.deleted', 'reset'], () => reread());
}

const STATUS_TEXT: Record<HostSummary['status'], string> = {
  online: 'online',
  offline: 'offline',
  deleting: 'deleting',
  deleted: 'deleted',
};

export function StatusDot({ status }: { status: HostSummary['status'] }) {
  return (
    <span class={`status status-${status}`} data-status={status}>
      <span class="dot" aria-hidden="true" />
      {STATUS_TEXT[status]}
    </span>
  );
}

function Upgrade({ upgrade }: { upgrade: HostSummary['upgrade'] }) {
  if (!upgrade) return <span class="muted">—</span>;
  return (
    <span class={`upgrade upgrade-${upgrade.state}`} title={`from ${upgrade.from ?? '?'} to ${upgrade.version}`}>
      {upgrade.version}: {upgrade.state.replace('_', ' ')}
    </span>
  );
}

export function HostsPage() {
  const session = useSession();
  const hosts = useLoad(() => api<HostSummary[]>('GET', '/api/hosts'), []);
  const tokens = useLoad(() => api<EnrollmentTokenView[]>('GET', '/api/hosts/enrollment-tokens'), []);
  const [adding, setAdding] = useState(false);
  const [flashed, flash] = useFlash();
  useLiveHosts(
    () => true,
    (event) => {
      const known = hosts.data?.some((h) => h.id === event.id) ?? false;
      if (known) hosts.update((list) => list.map((h) => (h.id === event.id ? withEvent(h, event) : h)));
      return known;
    },
    hosts.reload,
    flash,
  );
  return (
    <section>
      <PageTitle title="Hosts">
        {session.can('hosts.manage') && (
          <button type="button" class="primary" onClick={() => setAdding(true)} disabled={adding}>
            Add a host
          </button>
        )}
      </PageTitle>
      <p class="hint">Hypervisors running the homefleet agent report their guests here every half minute.</p>
      {adding && <AddHost onCreated={tokens.reload} onClose={() => setAdding(false)} />}
      {hosts.error && <Notice kind="error">{hosts.error}</Notice>}
      {!hosts.data && !hosts.error && <Loading />}
      {hosts.data?.length === 0 && (
        <Empty title="No hosts yet">{session.can('hosts.manage') ? 'Use “Add a host” to enroll a hypervisor.' : 'An administrator adds hosts.'}</Empty>
      )}
      {!!hosts.data?.length && (
        <div class="table-wrap card">
          <table class="hosts">
            <thead>
              <tr>
                <th scope="col">Host</th>
                <th scope="col">Status</th>
                <th scope="col">Last heartbeat</th>
                <th scope="col">Agent</th>
                <th scope="col">Upgrade</th>
                <th scope="col">Guests</th>
                <th scope="col">Drift</th>
              </tr>
            </thead>
            <tbody>
              {hosts.data.map((host) => (
                <tr key={host.id} data-host={host.hostname} class={flashed.has(host.id) ? 'flash' : undefined}>
                  <td>
                    <a href={`/hosts/${host.id}`}>{host.hostname}</a>
                  </td>
                  <td>
                    <StatusDot status={host.status} />
                  </td>
                  <td>
                    <Time iso={host.last_heartbeat_at} exact={false} />
                  </td>
                  <td class="mono">{host.agent_version}</td>
                  <td>
                    <Upgrade upgrade={host.upgrade} />
                  </td>
                  <td data-testid="guest-count">{host.guest_count}</td>
                  <td data-testid="drift-count">{host.drift_count ? <strong>{host.drift_count}</strong> : 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {session.can('hosts.read') && <EnrollmentTokens tokens={tokens} manage={session.can('hosts.manage')} />}
    </section>
  );
}

interface EnrollmentTokenView {
  id: number;
  name: string;
  created_by: string | null;
  created_at: string;
  expires_at: string;
  max_uses: number;
  uses: number;
  state: string;
}

/**
 * Tokens that can still enroll a host, and behind a switch the ones that cannot any more (used up,
 * expired, revoked): those are kept for the record, not for use, and would otherwise pile up here.
 */
function EnrollmentTokens({ tokens, manage }: { tokens: ReturnType<typeof useLoad<EnrollmentTokenView[]>>; manage: boolean }) {
  const [error, setError] = useState<string>();
  const [showAll, setShowAll] = useState(false);
  if (!tokens.data?.length) return null;
  const active = tokens.data.filter((t) => t.state === 'active');
  const finished = tokens.data.length - active.length;
  const shown = showAll ? tokens.data : active;
  async function revoke(id: number) {
    setError(undefined);
    try {
      await api('DELETE', `/api/hosts/enrollment-tokens/${id}`);
    } catch (e) {
      setError(messageOf(e));
    }
    tokens.reload();
  }
  return (
    <div class="card">
      <h2>Enrollment tokens</h2>
      {error && <Notice kind="error">{error}</Notice>}
      {finished > 0 && (
        <label class="check">
          <input type="checkbox" checked={showAll} onChange={(e) => setShowAll(e.currentTarget.checked)} /> Show used-up, expired and revoked tokens ({finished})
        </label>
      )}
      {shown.length === 0 ? (
        <p class="muted" data-testid="no-active-tokens">
          No token can enroll a host now.{manage ? ' “Add a host” makes one.' : ''}
        </p>
      ) : (
        <div class="table-wrap">
          <table class="tokens stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">State</th>
                <th scope="col">Uses</th>
                <th scope="col">Expires</th>
                <th scope="col">Made by</th>
                {manage && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {shown.map((t) => (
                <tr key={t.id} data-token={t.id}>
                  <td data-label="Name">{t.name || <span class="muted">(unnamed)</span>}</td>
                  <td data-label="State">{t.state.replace('_', ' ')}</td>
                  <td data-label="Uses">
                    {t.uses} of {t.max_uses}
                  </td>
                  <td data-label="Expires">
                    <Time iso={t.expires_at} exact={false} />
                  </td>
                  <td data-label="Made by">{t.created_by ?? '—'}</td>
                  {manage && (
                    <td>
                      {t.state === 'active' && (
                        <button type="button" onClick={() => revoke(t.id)}>
                          Revoke
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

interface CreatedEnrollment {
  install_command: string;
  expires_at: string;
  /** Why the command cannot work from another machine yet (plain HTTP, a loopback address); servers before these notes send none. */
  install_notes?: string[];
}

/** Creates an enrollment token and shows the one install line, once, with what still stands in its way. */
function AddHost({ onCreated, onClose }: { onCreated: () => void; onClose: () => void }) {
  const [name, setName] = useState('');
  const [hours, setHours] = useState('24');
  const [uses, setUses] = useState('1');
  const [created, setCreated] = useState<CreatedEnrollment>();
  const [error, setError] = useState<string>();
  const [fields, setFields] = useState<Record<string, string>>({});

  async function create(e: Event) {
    e.preventDefault();
    setError(undefined);
    setFields({});
    try {
      const body = { name, expires_in_s: Math.round(Number(hours) * 3600), max_uses: Number(uses) };
      setCreated(await api<CreatedEnrollment>('POST', '/api/hosts/enrollment-tokens', body));
      onCreated();
    } catch (err) {
      setError(messageOf(err));
      setFields((err as { fields?: Record<string, string> }).fields ?? {});
    }
  }

  return (
    <div class="card add-host" aria-labelledby="add-host-title">
      <h2 id="add-host-title">Add a host</h2>
      {!created && (
        <form onSubmit={create}>
          <div class="form-grid">
            <Field id="host-token-name" label="Name (optional)">
              <input id="host-token-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
            </Field>
            <Field id="host-token-hours" label="Valid for (hours)" error={fields.expires_in_s}>
              <input id="host-token-hours" inputMode="decimal" value={hours} onInput={(e) => setHours(e.currentTarget.value)} />
            </Field>
            <Field id="host-token-uses" label="Hosts it may enroll" error={fields.max_uses}>
              <input id="host-token-uses" inputMode="numeric" value={uses} onInput={(e) => setUses(e.currentTarget.value)} />
            </Field>
          </div>
          {error && <Notice kind="error">{error}</Notice>}
          <div class="form-actions">
            <button type="submit" class="primary">
              Create install command
            </button>
            <button type="button" onClick={onClose}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {created && (
        <div class="secret" data-testid="install-command">
          {!!created.install_notes?.length && (
            <Notice kind="warning">
              <strong>This command cannot work from another machine yet:</strong>
              <ul class="install-notes" data-testid="install-notes">
                {created.install_notes.map((note) => (
                  <li>{note}</li>
                ))}
              </ul>
            </Notice>
          )}
          <p>
            Run this as root on the hypervisor (a Proxmox node signs you in as root; elsewhere put <code>sudo</code> before <code>bash</code>). It is shown
            once; it expires <Time iso={created.expires_at} exact={false} />.
          </p>
          <pre class="command">
            <code>{created.install_command}</code>
          </pre>
          <div class="form-actions">
            <CopyButton text={created.install_command} primary />
            <button type="button" onClick={onClose}>
              Done
            </button>
          </div>
        </div>
      )}
    </div>
  );
}

const DRIFT_TEXT: Record<DriftItem['kind'], (item: DriftItem) => string> = {
  guest_without_instance: (i) => `Guest “${(i as { guest_name: string }).guest_name}” has no instance in the registry`,
  name_differs: (i) => {
    const d = i as { guest_name: string; instance_name: string };
    return `Registry says “${d.instance_name}”, the host says “${d.guest_name}”`;
  },
  instance_without_guest: (i) => `Instance “${(i as { instance_name: string }).instance_name}” runs on no reporting host`,
  conflict: (i) => `Also reported by ${(i as { other_hosts: { hostname: string }[] }).other_hosts.map((h) => h.hostname).join(', ')}: not applied`,
};

export function HostDetailPage({ id }: { id: string }) {
  const session = useSession();
  const host = useLoad(() => api<HostDetail>('GET', `/api/hosts/${encodeURIComponent(id)}`), [id]);
  const [message, setMessage] = useState<{ kind: 'error' | 'success'; text: string }>();
  const [confirming, setConfirming] = useState(false);
  const [confirmingAll, setConfirmingAll] = useState(false);
  const shipped = useShippedAgent();
  // What an action said holds until the host changes state: a removal that completes is then told by the Removal section.
  const status = host.data?.status;
  useEffect(() => setMessage(undefined), [status]);
  useLiveHosts(
    (hostId) => String(hostId) === id,
    (event) => {
      host.update((h) => withEvent(h, event));
      return true;
    },
    host.reload,
  );

  if (host.error) return <Notice kind="error">{host.error}</Notice>;
  if (!host.data) return <Loading />;
  const h = host.data;
  const manage = session.can('hosts.manage') && h.status !== 'deleted';
  const operate = session.can('fleet.operate') && h.status !== 'deleted';

  /** Runs an action; `done` is said afterwards unless the page shows the outcome itself (the Removal section). */
  async function act(action: () => Promise<unknown>, done?: string) {
    setMessage(undefined);
    try {
      await action();
      if (done) setMessage({ kind: 'success', text: done });
    } catch (e) {
      setMessage({ kind: 'error', text: messageOf(e) });
    }
    host.reload();
  }

  const apply = (body: unknown) =>
    act(async () => {
      const result = await api<{ applied: unknown[]; skipped: { vmid: number; error: string }[] }>('POST', `/api/hosts/${h.id}/drift/apply`, body);
      if (result.skipped.length) throw new ApiError(200, `Not applied: ${result.skipped.map((s) => `VMID ${s.vmid}: ${s.error.replace(/^vmid\b/, 'VMID')}`).join('; ')}.`);
    }, 'Applied to the registry.');
  const applicable = h.drift.filter((d) => d.kind !== 'instance_without_guest' && d.kind !== 'conflict');
  const creates = applicable.filter((d) => d.kind === 'guest_without_instance').length;
  const upgradable = h.upgrade_available;
  // Guests with no instance have no registry page to link to.
  const unregistered = new Set(h.drift.filter((d) => d.kind === 'guest_without_instance').map((d) => d.vmid));

  return (
    <section>
      <p class="crumbs">
        <a href="/hosts">Hosts</a> / {h.hostname}
      </p>
      <PageTitle title={h.hostname}>
        <StatusDot status={h.status} />
      </PageTitle>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      <div class="detail-grid">
        <div class="card">
          <h2>Facts</h2>
          <dl class="props">
            <dt>Last heartbeat</dt>
            <dd>
              <Time iso={h.last_heartbeat_at} />
            </dd>
            <dt>Agent</dt>
            <dd>
              <span class="mono">{h.agent_version}</span>
              {upgradable === false && <span class="muted"> (the newest this server ships)</span>}
              {upgradable === true && shipped && <span class="muted"> ({shipped} is available)</span>}
            </dd>
            <dt>Upgrade</dt>
            <dd>
              <Upgrade upgrade={h.upgrade} />
            </dd>
            <dt>Hypervisor</dt>
            <dd>{h.hypervisor_version || '—'}</dd>
            <dt>Addresses</dt>
            <dd class="mono">{h.addresses.join(', ') || '—'}</dd>
            <dt>Uptime</dt>
            <dd data-testid="uptime">{h.uptime_s === null ? '—' : uptime(h.uptime_s)}</dd>
            <dt>Machine id</dt>
            <dd class="mono">{h.machine_id}</dd>
            <dt>Enrolled</dt>
            <dd>
              <Time iso={h.enrolled_at} />
            </dd>
            <dt>Sync registry</dt>
            <dd>
              {manage ? (
                <label class="check">
                  <input
                    type="checkbox"
                    checked={h.sync_registry}
                    onChange={(e) => {
                      const next = e.currentTarget.checked;
                      void act(() => api('PATCH', `/api/hosts/${h.id}`, { sync_registry: next }), next ? 'Drift is applied on every heartbeat.' : 'Drift is only shown.');
                    }}
                  />
                  apply drift on every heartbeat
                </label>
              ) : h.sync_registry ? (
                'on'
              ) : (
                'off'
              )}
            </dd>
          </dl>
          {manage && h.status !== 'deleting' && (
            <div class="form-actions">
              {upgradable && (
                <button type="button" onClick={() => act(() => api('POST', `/api/hosts/${h.id}/upgrade`, {}), 'Upgrade requested; it is offered at the next heartbeat.')}>
                  Upgrade agent
                </button>
              )}
              <button type="button" onClick={() => act(() => api('POST', `/api/hosts/${h.id}/revoke-token`), 'Host token revoked. Re-run the install command on the host to enroll it again.')}>
                Revoke host token
              </button>
            </div>
          )}
          <Removal host={h} manage={manage} confirming={confirming} setConfirming={setConfirming} act={act} />
        </div>
        <div>
          <div class="card">
            <h2>Drift against the registry</h2>
            {h.drift.length === 0 && <p class="muted">The registry matches this host.</p>}
            {h.drift.length > 0 && (
              <ul class="drift">
                {h.drift.map((item) => (
                  <li key={`${item.kind}-${item.vmid}`} data-drift={item.kind} data-vmid={item.vmid}>
                    <span class="mono">{item.vmid}</span> {DRIFT_TEXT[item.kind](item)}{' '}
                    {operate && item.kind !== 'instance_without_guest' && item.kind !== 'conflict' && (
                      <button type="button" onClick={() => apply({ items: [{ vmid: item.vmid }] })}>
                        {item.kind === 'guest_without_instance' ? 'Create instance' : 'Rename instance'}
                      </button>
                    )}
                  </li>
                ))}
              </ul>
            )}
            {operate && applicable.length > 1 && !confirmingAll && (
              <button type="button" class="primary" onClick={() => setConfirmingAll(true)}>
                Apply all…
              </button>
            )}
            {operate && applicable.length > 1 && confirmingAll && (
              <Confirm
                label={`Confirm applying all drift from ${h.hostname}`}
                question={`Apply all ${applicable.length} changes from ${h.hostname} to the registry? ${[
                  creates ? `${plural(creates, 'instance')} created` : '',
                  applicable.length - creates ? `${plural(applicable.length - creates, 'instance')} renamed` : '',
                ]
                  .filter(Boolean)
                  .join(', ')}, as the host reports them.`}
                action={`Apply ${applicable.length} changes`}
                danger={false}
                onConfirm={() => {
                  setConfirmingAll(false);
                  void apply({ all: true });
                }}
                onCancel={() => setConfirmingAll(false)}
              />
            )}
          </div>
          <div class="card">
            <h2>Guests ({h.guests.length})</h2>
            {h.guests.length === 0 ? (
              <p class="muted">No guests reported.</p>
            ) : (
              <div class="table-wrap">
                <table class="guests">
                  <thead>
                    <tr>
                      <th scope="col">VMID</th>
                      <th scope="col">Name</th>
                      <th scope="col">Type</th>
                      <th scope="col">Status</th>
                    </tr>
                  </thead>
                  <tbody>
                    {h.guests.map((g) => (
                      <tr key={g.vmid} data-guest={g.vmid}>
                        <td>{unregistered.has(g.vmid) ? g.vmid : <a href={`/instances/${g.vmid}`}>{g.vmid}</a>}</td>
                        <td>{g.name}</td>
                        <td>{g.type}</td>
                        <td>{g.status}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </div>
        </div>
      </div>
    </section>
  );
}

/**
 * The agent version this server ships (the signed manifest's current one), for "Upgrade agent": read
 * once per page; undefined until known or when the server ships none.
 */
function useShippedAgent(): string | undefined {
  const manifest = useLoad(() => api<{ agents?: { version: string }[] }>('GET', '/api/agent/releases/manifest.json'), []);
  return manifest.data?.agents?.[0]?.version;
}

function Removal(props: {
  host: HostDetail;
  manage: boolean;
  confirming: boolean;
  setConfirming: (v: boolean) => void;
  act: (action: () => Promise<unknown>, done?: string) => Promise<void>;
}) {
  const { host: h, manage, confirming, setConfirming, act } = props;
  const d = h.deletion;
  return (
    <div class="danger-zone">
      <h3>Removal</h3>
      {d && (
        <p data-testid="deletion-state">
          {d.status === 'pending' && 'Waiting for the host’s next heartbeat to send the uninstall command.'}
          {d.status === 'delivered' && 'Uninstall sent; waiting for the host’s receipt.'}
          {d.status === 'confirmed' && (
            <>
              Removed; the host confirmed at <Time iso={d.confirmed_at} />.
            </>
          )}
          {d.status === 'forced' && (
            <>
              Removed by force at <Time iso={d.confirmed_at} />, without a receipt.
            </>
          )}
        </p>
      )}
      {manage && h.status === 'deleting' && (
        <button type="button" class="danger" onClick={() => act(() => api('DELETE', `/api/hosts/${h.id}?force=true`))}>
          Force removal
        </button>
      )}
      {manage && h.status !== 'deleting' && !confirming && (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Remove host…
        </button>
      )}
      {manage && h.status !== 'deleting' && confirming && (
        <div class="confirm">
          <span>The agent uninstalls itself at its next heartbeat.</span>
          <button
            type="button"
            class="danger"
            onClick={() => {
              setConfirming(false);
              void act(() => api('DELETE', `/api/hosts/${h.id}`));
            }}
          >
            Remove
          </button>
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </div>
      )}
      {!manage && !d && <p class="muted">Administrators remove hosts.</p>}
      {h.status === 'deleted' && (
        <p>
          <button type="button" class="link" onClick={() => navigate('/hosts')}>
            Back to hosts
          </button>
        </p>
      )}
    </div>
  );
}
