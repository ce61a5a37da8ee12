import { useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api';
import { Badge, Elapsed, Empty, Field, Loading, Notice, PageTitle, Time, useLoad } from '../components/ui';
import { useLive } from '../live';
import { duration } from '../format';
import { useSession } from '../session';
import { isConfigured, isSet, missingFields, notConfiguredText, secretsToRetype } from '../jobConfig';
import type { JobView as Job } from '../../server/contract/jobs';
import { RunNow } from './Jobs';

type FieldKind = 'text' | 'secret' | 'boolean' | 'url';
/** Each job key's config fields (registry-service.md, PRODUCT.md); secrets are write-only. */
const CONFIG_FIELDS: Record<string, { name: string; label: string; kind: FieldKind; hint?: string }[]> = {
  tailscale_sync: [
    { name: 'api_key', label: 'API key', kind: 'secret' },
    { name: 'tailnet', label: 'Tailnet', kind: 'text', hint: 'Empty means "-", the key\'s default tailnet.' },
    { name: 'api_url', label: 'API URL', kind: 'url', hint: 'Default https://api.tailscale.com' },
    { name: 'run_on_create', label: 'Also run after an instance is created', kind: 'boolean' },
  ],
  patchmon_sync: [
    { name: 'api_url', label: 'Hosts endpoint URL', kind: 'url' },
    { name: 'api_token', label: 'API token', kind: 'secret', hint: '<key>:<secret>, or an already base64-encoded credential.' },
    { name: 'run_on_create', label: 'Also run after an instance is created', kind: 'boolean' },
  ],
  semaphore_sync: [
    { name: 'api_url', label: 'Inventory endpoint URL', kind: 'url' },
    { name: 'api_token', label: 'API token', kind: 'secret' },
    { name: 'run_on_create', label: 'Also run after an instance is created', kind: 'boolean' },
  ],
};

type Message = { kind: 'error' | 'success' | 'warning'; text: string };

export function JobDetailPage({ id }: { id: string }) {
  const session = useSession();
  const job = useLoad(() => api('GET /api/jobs/:id', { params: { id } }), [id]);
  useLive(['job.run.started', 'job.run.finished', 'reset'], (event) => {
    if (event.type === 'reset') return job.reload();
    const run = event.data;
    if (String(run.job_id) !== id) return;
    if (event.type === 'job.run.finished') return job.reload();
    const started = { id: run.run_id, job_id: run.job_id, started_at: run.started_at, ended_at: null, status: 'running' as const, result: '' };
    job.update((current) => ({ ...current, last_status: 'running', last_run_at: run.started_at, runs: [started, ...(current.runs ?? [])].slice(0, 10) }));
  });
  if (job.error) return <Notice kind="error">{job.error}</Notice>;
  if (!job.data) return <Loading />;
  const item = job.data;
  const runs = item.runs ?? [];
  return (
    <section>
      <p class="crumbs">
        <a href="/jobs">Jobs</a> / {item.name}
      </p>
      <PageTitle title={item.name} />
      <p class="muted">{item.description}</p>
      {session.can('fleet.operate') && (
        <div class="card run-card">
          <RunNow job={item} onDone={job.reload} />
        </div>
      )}
      <div class="detail-grid">
        <div class="card" id="settings">
          <h2>Settings</h2>
          {session.can('settings.manage') ? (
            <ConfigForm key={item.id} job={item} onSaved={job.reload} />
          ) : (
            <ReadOnlyConfig job={item} />
          )}
        </div>
        <div class="card">
          <h2>Last runs</h2>
          {runs.length === 0 ? (
            <Empty title="Not run yet">
              {!isConfigured(item)
                ? 'It can run once it is configured.'
                : session.can('fleet.operate')
                  ? 'Preview its first run above, then run it.'
                  : 'It runs on its schedule once enabled.'}
            </Empty>
          ) : (
            <div class="table-wrap">
              <table class="runs stack">
                <thead>
                  <tr>
                    <th scope="col">Started</th>
                    <th scope="col">Took</th>
                    <th scope="col">Status</th>
                    <th scope="col">Result</th>
                  </tr>
                </thead>
                <tbody>
                  {runs.slice(0, 10).map((run) => (
                    <tr key={run.id} data-run={run.id}>
                      <td data-label="Started">
                        <Time iso={run.started_at} />
                      </td>
                      <td data-label="Took">{run.ended_at ? duration(run.started_at, run.ended_at) : <Elapsed since={run.started_at} />}</td>
                      <td data-label="Status">
                        <Badge value={run.status} />
                      </td>
                      <td class="result" data-label="Result">
                        {run.result}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      </div>
    </section>
  );
}

function ReadOnlyConfig({ job }: { job: Job }) {
  const fields = CONFIG_FIELDS[job.key] ?? [];
  return (
    <dl class="props">
      <dt>Enabled</dt>
      <dd>{job.enabled ? 'yes' : 'no'}</dd>
      <dt>Schedule</dt>
      <dd>every {job.schedule} min</dd>
      {fields.map((field) => (
        <>
          <dt>{field.label}</dt>
          <dd>{field.kind === 'secret' ? (isSet(job.config[field.name]) ? 'set' : 'not set') : String(job.config[field.name] ?? '—')}</dd>
        </>
      ))}
    </dl>
  );
}

/** What the saved settings mean: a warning when the job is enabled but cannot run yet. */
function savedMessage(job: Job): Message {
  if (job.enabled && missingFields(job).length > 0) {
    return { kind: 'warning', text: `Settings saved. The job is enabled, but ${notConfiguredText(job)}; it will fail on every run until it is configured.` };
  }
  return { kind: 'success', text: job.enabled ? `Settings saved. The job runs every ${job.schedule} min.` : 'Settings saved. The job is disabled.' };
}

/**
 * The form is not re-made when the page reloads the job after a save: the boxes keep what was
 * typed (and just stored), the confirmation stays, and nothing typed during the reload is lost.
 * What the server answered the save with is what the form then describes.
 */
function ConfigForm(props: { job: Job; onSaved: () => void }) {
  const { onSaved } = props;
  const [stored, setStored] = useState<Job>();
  const job = stored ?? props.job;
  const [message, setMessage] = useState<Message>();
  const fields = CONFIG_FIELDS[job.key] ?? [];
  const [enabled, setEnabled] = useState(Boolean(job.enabled));
  const [schedule, setSchedule] = useState(String(job.schedule));
  const [values, setValues] = useState<Record<string, unknown>>(() =>
    Object.fromEntries(fields.map((f) => [f.name, f.kind === 'secret' ? '' : f.kind === 'boolean' ? job.config[f.name] === true : (job.config[f.name] ?? '')])),
  );
  const [errors, setErrors] = useState<Record<string, string>>({});
  // Live: what would still be missing once saved; a value typed into its box counts as set.
  const typed = (field: string) => typeof values[field] === 'string' && (values[field] as string).trim() !== '';
  const stillMissing = missingFields(job).filter((field) => !typed(field));
  // A stored secret is kept only for the URL it was saved with: a new URL shows it as gone.
  const retype = secretsToRetype(job, values);
  const secretState = (field: string) => (retype.includes(field) ? 'enter again' : isSet(job.config[field]) ? 'set' : 'not set');

  async function submit(event: Event) {
    event.preventDefault();
    setMessage(undefined);
    setErrors({});
    const config: Record<string, unknown> = {};
    for (const field of fields) {
      const value = values[field.name];
      // A blank secret box means "keep what is stored": the field is left out of the update.
      if (field.kind === 'secret' && value === '') continue;
      config[field.name] = value;
    }
    try {
      // A schedule that is not a number is sent as typed: the server's 400 says what is wrong with it.
      const minutes = (/^\d+$/.test(schedule) ? Number(schedule) : schedule) as number;
      const saved = await api('PUT /api/jobs/:id', { params: { id: job.id }, body: { enabled, schedule: minutes, config } });
      setStored(saved);
      // A stored secret is never shown again: its box empties and reads "(set)".
      setValues((v) => ({ ...v, ...Object.fromEntries(fields.filter((f) => f.kind === 'secret').map((f) => [f.name, ''])) }));
      setMessage(savedMessage(saved));
      onSaved();
    } catch (e) {
      if (e instanceof ApiError) setErrors(Object.fromEntries(Object.entries(e.fields).map(([k, v]) => [k.replace(/^config\./, ''), v])));
      setMessage({ kind: 'error', text: messageOf(e) });
    }
  }

  return (
    <form onSubmit={submit} noValidate class="form">
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      <label class="check">
        <input type="checkbox" name="enabled" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Enabled (runs on its schedule)
      </label>
      {enabled && stillMissing.length > 0 && (
        <Notice kind="warning">
          {notConfiguredText({ key: job.key, config: {}, missing: stillMissing })}. Enabled as it is, it will fail on every run until it is configured.
        </Notice>
      )}
      <Field id="schedule" label="Schedule (minutes)" error={errors.schedule} hint="From 1 to 10080 (a week).">
        <input id="schedule" inputMode="numeric" value={schedule} onInput={(e) => setSchedule(e.currentTarget.value)} />
      </Field>
      {fields.map((field) =>
        field.kind === 'boolean' ? (
          <label class="check" key={field.name}>
            <input
              type="checkbox"
              name={field.name}
              checked={values[field.name] === true}
              onChange={(e) => setValues((v) => ({ ...v, [field.name]: e.currentTarget.checked }))}
            />{' '}
            {field.label}
          </label>
        ) : (
          <Field
            key={field.name}
            id={`config-${field.name}`}
            label={field.kind === 'secret' ? `${field.label} (${secretState(field.name)})` : field.label}
            error={errors[field.name]}
            hint={
              field.kind !== 'secret'
                ? field.hint
                : retype.includes(field.name)
                  ? 'The URL changed: enter it again. A stored secret is only sent to the address it was saved for.'
                  : isSet(job.config[field.name])
                    ? 'Leave empty to keep the stored value.'
                    : 'Not set yet.'
            }
          >
            <input
              id={`config-${field.name}`}
              name={field.name}
              type={(field.kind === 'secret' ? 'password' : field.kind === 'url' ? 'url' : 'text') as 'text'}
              autocomplete={field.kind === 'secret' ? 'new-password' : 'off'}
              placeholder={secretState(field.name) === 'set' && field.kind === 'secret' ? '•••••••• (stored)' : ''}
              value={String(values[field.name] ?? '')}
              onInput={(e) => setValues((v) => ({ ...v, [field.name]: e.currentTarget.value }))}
            />
          </Field>
        ),
      )}
      <div class="form-actions">
        <button type="submit" class="primary">
          Save settings
        </button>
      </div>
    </form>
  );
}
