import { useState } from 'preact/hooks';
import { api, messageOf } from '../api';
import { Field, FormActions, Notice, Time, useLoad } from '../components/ui';
import { ALERT_RULES, SEVERITIES, type AlertRule, type Severity } from '../../server/contract/alerts';
import { CHANNEL_SECRET_FIELDS, CHANNEL_TYPES, type Channel, type ChannelType, type Delivery } from '../../server/contract/notifications';

/** The config fields each channel type asks for (PRODUCT.md), in form order. */
const FIELDS: Record<ChannelType, { name: string; label: string; hint?: string; number?: boolean; check?: boolean }[]> = {
  webhook: [
    { name: 'url', label: 'URL', hint: 'http:// or https://' },
    { name: 'secret', label: 'Signing secret (optional)', hint: 'signs each body: X-Homefleet-Signature: sha256=<HMAC>' },
  ],
  ntfy: [
    { name: 'server', label: 'Server', hint: 'https://ntfy.sh or your own' },
    { name: 'topic', label: 'Topic' },
    { name: 'token', label: 'Access token (optional)' },
  ],
  gotify: [
    { name: 'server', label: 'Server' },
    { name: 'token', label: 'Application token' },
  ],
  discord: [{ name: 'webhook_url', label: 'Webhook URL' }],
  email: [
    { name: 'host', label: 'SMTP host' },
    { name: 'port', label: 'Port', number: true },
    { name: 'secure', label: 'TLS from the start (port 465)', check: true },
    { name: 'user', label: 'User (optional)' },
    { name: 'password', label: 'Password (optional)', hint: 'sent only over TLS (TLS from the start, or STARTTLS)' },
    { name: 'allow_plaintext_password', label: 'Send the password without TLS (a server that offers none)', check: true },
    { name: 'from', label: 'From' },
    { name: 'to', label: 'To', hint: 'addresses separated by commas' },
  ],
};

/** A stored secret reads back as this; sent back, it keeps the stored value (as for job secrets). */
const REDACTED = '**REDACTED**';

/** Where each type sends its secret (server/notifications/secrets.ts): the server keeps a secret only while these stay. */
const DESTINATION: Record<ChannelType, string[]> = { webhook: ['url'], ntfy: ['server'], gotify: ['server'], discord: [], email: ['host', 'port', 'allow_plaintext_password'] };
const shown = (v: string | boolean | undefined) => (v === true ? 'true' : v === false || v === undefined ? '' : v.trim());

/** The form's values for a stored channel: its config as text, stored secrets left empty (kept unless typed over). */
function valuesOf(channel: Channel): Record<string, string | boolean> {
  const values: Record<string, string | boolean> = {};
  for (const f of FIELDS[channel.type]) {
    const v = channel.config[f.name];
    if (v === undefined || v === null || v === REDACTED) continue;
    values[f.name] = typeof v === 'boolean' ? v : String(v);
  }
  return values;
}

/** Adds a channel, or edits `editing` (its type fixed; a stored secret stays unless a new one is typed). */
function ChannelForm({ done, editing, cancel }: { done: () => void; editing?: Channel; cancel?: () => void }) {
  const [type, setType] = useState<ChannelType>(editing?.type ?? 'ntfy');
  const [values, setValues] = useState<Record<string, string | boolean>>(editing ? valuesOf(editing) : {});
  const [name, setName] = useState(editing?.name ?? '');
  const [severity, setSeverity] = useState<Severity>(editing?.min_severity ?? 'warning');
  const [quiet, setQuiet] = useState(editing?.quiet_hours ?? { start: '', end: '', timezone: Intl.DateTimeFormat().resolvedOptions().timeZone });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const stored = (field: string) => editing?.config[field] === REDACTED;
  const saved = editing ? valuesOf(editing) : {};
  const moved = editing !== undefined && DESTINATION[type].some((f) => shown(values[f]) !== shown(saved[f]));
  const retype = (field: string) => moved && stored(field) && !values[field];
  const prefix = editing ? `channel-${editing.id}` : 'channel';

  async function save(e: Event) {
    e.preventDefault();
    const config: Record<string, unknown> = {};
    for (const f of FIELDS[type]) {
      const v = values[f.name];
      if (v === undefined || v === '') {
        if (stored(f.name)) config[f.name] = REDACTED;
        continue;
      }
      config[f.name] = f.number ? Number(v) : v;
    }
    try {
      const quietHours = quiet.start && quiet.end ? { quiet_hours: quiet } : {};
      const body = { name, type, config, rules: editing?.rules ?? 'all', min_severity: severity, ...quietHours };
      if (editing) await api('PUT /api/notifications/channels/:id', { params: { id: editing.id }, body });
      else await api('POST /api/notifications/channels', { body });
      if (!editing) {
        setValues({});
        setName('');
      }
      setErrors({});
      setError(undefined);
      done();
    } catch (err) {
      setErrors((err as { fields?: Record<string, string> }).fields ?? {});
      setError(messageOf(err));
    }
  }

  return (
    <form onSubmit={save} class="stack" data-testid={editing ? 'channel-edit-form' : 'channel-form'}>
      <h3>{editing ? `Edit “${editing.name}”` : 'Add a channel'}</h3>
      {error && <Notice kind="error">{error}</Notice>}
      <Field id={`${prefix}-name`} label="Name" error={errors.name}>
        <input id={`${prefix}-name`} value={name} onInput={(e) => setName(e.currentTarget.value)} required />
      </Field>
      <Field id={`${prefix}-type`} label="Type" hint={editing ? 'A channel keeps its type: add a new one for another.' : undefined}>
        <select id={`${prefix}-type`} value={type} disabled={Boolean(editing)} onChange={(e) => (setType(e.currentTarget.value as ChannelType), setValues({}))}>
          {CHANNEL_TYPES.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </Field>
      {FIELDS[type].map((f) => (
        <Field
          key={f.name}
          id={`${prefix}-${f.name}`}
          label={f.label}
          hint={
            retype(f.name)
              ? 'The destination changed: enter it again. A stored secret is only sent where it was saved for.'
              : stored(f.name)
                ? 'A value is stored (not shown): leave empty to keep it.'
                : f.hint
          }
          error={errors[`config.${f.name}`]}
        >
          {f.check ? (
            <input id={`${prefix}-${f.name}`} type="checkbox" checked={values[f.name] === true} onChange={(e) => setValues({ ...values, [f.name]: e.currentTarget.checked })} />
          ) : CHANNEL_SECRET_FIELDS[type].includes(f.name) ? (
            <input id={`${prefix}-${f.name}`} type="password" autocomplete="off" value={String(values[f.name] ?? '')} onInput={(e) => setValues({ ...values, [f.name]: e.currentTarget.value })} />
          ) : (
            <input id={`${prefix}-${f.name}`} inputMode={f.number ? 'numeric' : undefined} value={String(values[f.name] ?? '')} onInput={(e) => setValues({ ...values, [f.name]: e.currentTarget.value })} />
          )}
        </Field>
      ))}
      <Field id={`${prefix}-severity`} label="Send alerts of at least">
        <select id={`${prefix}-severity`} value={severity} onChange={(e) => setSeverity(e.currentTarget.value as Severity)}>
          {SEVERITIES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </Field>
      <Field id={`${prefix}-quiet-start`} label="Quiet hours (optional): from" hint="HH:MM; nothing is sent from then until the end (recorded as suppressed)" error={errors['quiet_hours.start']}>
        <input id={`${prefix}-quiet-start`} type="time" value={quiet.start} onInput={(e) => setQuiet({ ...quiet, start: e.currentTarget.value })} />
      </Field>
      <Field id={`${prefix}-quiet-end`} label="Quiet hours: until" error={errors['quiet_hours.end']}>
        <input id={`${prefix}-quiet-end`} type="time" value={quiet.end} onInput={(e) => setQuiet({ ...quiet, end: e.currentTarget.value })} />
      </Field>
      <Field id={`${prefix}-quiet-timezone`} label="Quiet hours: time zone" error={errors['quiet_hours.timezone']}>
        <input id={`${prefix}-quiet-timezone`} value={quiet.timezone} onInput={(e) => setQuiet({ ...quiet, timezone: e.currentTarget.value })} />
      </Field>
      <FormActions submit={editing ? 'Save channel' : 'Add channel'} cancel={cancel} />
    </form>
  );
}

/** Settings → Notifications: channels (secrets never shown), a test button each, and the delivery log. */
export function NotificationSettings() {
  const channels = useLoad(() => api('GET /api/notifications/channels'), []);
  const deliveries = useLoad(() => api('GET /api/notifications/deliveries', { query: { limit: 50 } }), []);
  const [outcome, setOutcome] = useState<{ kind: 'success' | 'error'; text: string }>();
  const [editing, setEditing] = useState<Channel>();

  async function test(c: Channel) {
    setOutcome(undefined);
    try {
      const r = await api('POST /api/notifications/channels/:id/test', { params: { id: c.id } });
      setOutcome(r.ok ? { kind: 'success', text: `Test message sent to ${c.name}.` } : { kind: 'error', text: `${c.name}: ${r.error}` });
    } catch (e) {
      setOutcome({ kind: 'error', text: messageOf(e) });
    }
    deliveries.reload();
  }
  async function remove(c: Channel) {
    if (!confirm(`Remove the channel “${c.name}”? Alerts will no longer be sent there.`)) return;
    try {
      await api('DELETE /api/notifications/channels/:id', { params: { id: c.id } });
      if (editing?.id === c.id) setEditing(undefined);
    } catch (e) {
      setOutcome({ kind: 'error', text: messageOf(e) });
    }
    channels.reload();
  }

  return (
    <div class="card span-all" data-testid="notifications">
      <h2>Notifications</h2>
      {outcome && <Notice kind={outcome.kind}>{outcome.text}</Notice>}
      {channels.error && <Notice kind="error">{channels.error}</Notice>}
      {channels.data && channels.data.length === 0 && <p class="muted">No channel yet: alerts are only shown on the Alerts page.</p>}
      {channels.data && channels.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Rules</th>
                <th scope="col">At least</th>
                <th scope="col">Quiet hours</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {channels.data.map((c) => (
                <tr key={c.id} data-channel={c.name}>
                  <td>{c.name}</td>
                  <td>{c.type}</td>
                  <td>{c.rules === 'all' ? 'all' : c.rules.join(', ')}</td>
                  <td>{c.min_severity}</td>
                  <td>{c.quiet_hours ? `${c.quiet_hours.start}–${c.quiet_hours.end} ${c.quiet_hours.timezone}` : '—'}</td>
                  <td class="actions">
                    <button type="button" onClick={() => void test(c)}>
                      Send a test
                    </button>
                    <button type="button" aria-expanded={editing?.id === c.id} onClick={() => setEditing(editing?.id === c.id ? undefined : c)}>
                      Edit
                    </button>
                    <button type="button" class="danger" onClick={() => void remove(c)}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing && (
        <ChannelForm
          key={editing.id}
          editing={editing}
          cancel={() => setEditing(undefined)}
          done={() => {
            setOutcome({ kind: 'success', text: `Channel “${editing.name}” saved.` });
            setEditing(undefined);
            channels.reload();
          }}
        />
      )}
      <ChannelForm done={channels.reload} />
      <h3>Delivery log</h3>
      {deliveries.data && deliveries.data.length === 0 && <p class="muted">Nothing sent yet.</p>}
      {deliveries.data && deliveries.data.length > 0 && (
        <div class="table-wrap">
          <table data-testid="deliveries">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Channel</th>
                <th scope="col">Event</th>
                <th scope="col">Outcome</th>
                <th scope="col">Attempts</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.data.map((d) => (
                <tr key={d.id}>
                  <td>
                    <Time iso={d.created_at} exact={false} />
                  </td>
                  <td>{d.channel_name}</td>
                  <td class="mono">{d.event}</td>
                  <td>
                    {d.status}
                    {d.error ? <span class="muted"> ({d.error})</span> : ''}
                  </td>
                  <td class="num">{d.attempts}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function RuleRow({ rule, saved }: { rule: AlertRule; saved: () => void }) {
  const [draft, setDraft] = useState(rule);
  const [error, setError] = useState<string>();
  const threshold = rule.percent !== undefined ? 'percent' : rule.days !== undefined ? 'days' : undefined;
  async function save() {
    try {
      await api('PUT /api/alerts/rules/:rule', { params: { rule: rule.rule }, body: { enabled: draft.enabled, severity: draft.severity, for_s: draft.for_s, ...(threshold ? { [threshold]: draft[threshold] } : {}) } });
      setError(undefined);
      saved();
    } catch (e) {
      setError(messageOf(e));
    }
  }
  return (
    <tr data-rule={rule.rule}>
      <td>
        <label class="check">
          <input type="checkbox" checked={draft.enabled} onChange={(e) => setDraft({ ...draft, enabled: e.currentTarget.checked })} />
          <span class="mono">{rule.rule}</span>
        </label>
        <div class="muted small">{rule.description}</div>
        {error && <div class="field-error">{error}</div>}
      </td>
      <td>
        <select aria-label={`${rule.rule} severity`} value={draft.severity} onChange={(e) => setDraft({ ...draft, severity: e.currentTarget.value as Severity })}>
          {SEVERITIES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </td>
      <td>
        <input aria-label={`${rule.rule} for seconds`} type="number" min={0} value={draft.for_s} onInput={(e) => setDraft({ ...draft, for_s: Number(e.currentTarget.value) })} />
      </td>
      <td>
        {threshold ? (
          <input aria-label={`${rule.rule} ${threshold}`} type="number" value={draft[threshold]} onInput={(e) => setDraft({ ...draft, [threshold]: Number(e.currentTarget.value) })} />
        ) : (
          '—'
        )}
        {threshold && <span class="muted"> {threshold === 'percent' ? '%' : 'days'}</span>}
      </td>
      <td>
        <button type="button" onClick={() => void save()}>
          Save
        </button>
      </td>
    </tr>
  );
}

/** Settings → Alert rules (administrators): each built-in rule's switch, severity, for_s and threshold. */
export function AlertRuleSettings() {
  const rules = useLoad(() => api('GET /api/alerts/rules'), []);
  return (
    <div class="card span-all" data-testid="alert-rules">
      <h2>Alert rules</h2>
      {rules.error && <Notice kind="error">{rules.error}</Notice>}
      {rules.data && (
        <div class="table-wrap">
          <table class="alert-rules">
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Severity</th>
                <th scope="col">For (s)</th>
                <th scope="col">Threshold</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {ALERT_RULES.map((name) => rules.data!.find((r) => r.rule === name)).map((r) => r && <RuleRow key={`${r.rule}-${JSON.stringify(r)}`} rule={r} saved={rules.reload} />)}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
