import { useState } from 'preact/hooks';
import { api, messageOf } from '../api';
import { Badge, Elapsed, Empty, Loading, Notice, PageTitle, Time, useLoad } from '../components/ui';
import { historyChange, plural } from '../format';
import { isConfigured, notConfiguredText } from '../jobConfig';
import { useLive } from '../live';
import { useSession } from '../session';
import type { DryRun, JobView as Job } from '../../server/contract/jobs';

export function JobsPage() {
  const jobs = useLoad(() => api('GET /api/jobs'), []);
  // Live: a run that starts (here, on its schedule, or from another browser) shows at once; its end reloads the card.
  useLive(['job.run.started', 'job.run.finished', 'reset'], (event) => {
    if (event.type === 'job.run.started') {
      const run = event.data;
      jobs.update((list) => list.map((job) => (job.id === run.job_id ? { ...job, last_status: 'running', last_run_at: run.started_at, last_run_id: run.run_id } : job)));
    } else jobs.reload();
  });
  return (
    <section>
      <PageTitle title="Jobs" />
      <p class="hint">Sync jobs pull data from Tailscale, PatchMon and Semaphore onto the instances. Changes they make appear in each instance's timeline.</p>
      {jobs.error && <Notice kind="error">{jobs.error}</Notice>}
      {!jobs.data && !jobs.error && <Loading />}
      {jobs.data?.length === 0 && (
        <Empty title="No jobs">Sync jobs are created when the server starts with a database file; an in-memory server has none.</Empty>
      )}
      <div class="job-list">
        {jobs.data?.map((job) => (
          <JobCard key={job.id} job={job} onChanged={jobs.reload} />
        ))}
      </div>
    </section>
  );
}

type Message = { kind: 'error' | 'success' | 'warning'; text: string };

/** What enabling a job means: a warning when it is not configured, since every run will then fail. */
export function enabledMessage(job: Job, enabled: boolean): Message {
  if (!enabled) return { kind: 'success', text: 'Disabled.' };
  if (isConfigured(job)) return { kind: 'success', text: `Enabled: runs every ${job.schedule} min.` };
  return { kind: 'warning', text: `Enabled, but ${notConfiguredText(job)}. It will fail on every run until it is configured.` };
}

function JobCard({ job, onChanged }: { job: Job; onChanged: () => void }) {
  const session = useSession();
  const canManage = session.can('settings.manage');
  const [schedule, setSchedule] = useState(String(job.schedule));
  const [message, setMessage] = useState<Message>();
  // Shown at once when toggled, and put back if the server refuses the change.
  const [enabled, setEnabled] = useState(Boolean(job.enabled));

  async function save(patch: Record<string, unknown>, done: Message): Promise<boolean> {
    setMessage(undefined);
    try {
      await api('PUT /api/jobs/:id', { params: { id: job.id }, body: patch });
      setMessage(done);
      onChanged();
      return true;
    } catch (e) {
      setMessage({ kind: 'error', text: messageOf(e) });
      return false;
    }
  }

  return (
    <article class="card job" data-job={job.key} aria-labelledby={`job-${job.id}`}>
      <header class="job-head">
        <h2 id={`job-${job.id}`}>
          <a href={`/jobs/${job.id}`}>{job.name}</a>
        </h2>
        <span class={`pill ${job.enabled ? 'on' : 'off'}`}>{job.enabled ? 'enabled' : 'disabled'}</span>
      </header>
      <p class="muted">{job.description}</p>
      <dl class="props">
        <dt>Last run</dt>
        <dd>
          <Time iso={job.last_run_at} exact={false} /> {job.last_status && <Badge value={job.last_status} />}
          {job.last_status === 'running' && job.last_run_at && (
            <>
              {' '}
              for <Elapsed since={job.last_run_at} />
            </>
          )}
        </dd>
        <dt>Schedule</dt>
        <dd>every {job.schedule} min</dd>
      </dl>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      <div class="job-controls">
        {canManage && (
          <>
            <label class="check">
              <input
                type="checkbox"
                checked={enabled}
                onChange={(e) => {
                  const next = e.currentTarget.checked;
                  setEnabled(next);
                  void save({ enabled: next }, enabledMessage(job, next)).then((ok) => ok || setEnabled(!next));
                }}
              />
              Enabled
            </label>
            <form
              class="inline"
              onSubmit={(e) => {
                e.preventDefault();
                void save({ schedule: Number(schedule) }, { kind: 'success', text: 'Schedule saved.' });
              }}
            >
              <label for={`schedule-${job.id}`}>Every</label>
              <input id={`schedule-${job.id}`} class="short" inputMode="numeric" value={schedule} onInput={(e) => setSchedule(e.currentTarget.value)} />
              <span>min</span>
              <button type="submit">Save</button>
            </form>
          </>
        )}
        {session.can('fleet.operate') && <RunNow job={job} onDone={onChanged} />}
      </div>
    </article>
  );
}

const PREVIEW_ROWS = 200;

/**
 * Run-now blocks until the job ends, so the button stays busy and shows the outcome afterwards.
 * A job that is not configured would only fail ("a run whose required config is missing fails at
 * once"), so it is not offered: the page says what to set instead. A job that never ran offers a
 * preview first (a dry run: what it would change, nothing written), then Run now to apply it.
 */
export function RunNow({ job, onDone }: { job: Job; onDone: () => void }) {
  const session = useSession();
  const [busy, setBusy] = useState<'run' | 'preview'>();
  const [outcome, setOutcome] = useState<{ kind: 'error' | 'success'; text: string }>();
  const [preview, setPreview] = useState<DryRun>();
  const firstRun = job.last_run_at === null;
  async function run() {
    setBusy('run');
    setOutcome(undefined);
    setPreview(undefined);
    try {
      const { summary } = await api('POST /api/jobs/:id/run', { params: { id: job.id } });
      setOutcome({ kind: 'success', text: summary });
    } catch (e) {
      setOutcome({ kind: 'error', text: `Run failed: ${messageOf(e)}` });
    } finally {
      setBusy(undefined);
      onDone();
    }
  }
  async function dryRun() {
    setBusy('preview');
    setOutcome(undefined);
    setPreview(undefined);
    try {
      // A dry run answers what it would change.
      setPreview((await api('POST /api/jobs/:id/run', { params: { id: job.id }, query: { dry_run: 'true' } })) as DryRun);
    } catch (e) {
      setOutcome({ kind: 'error', text: `Preview failed: ${messageOf(e)}` });
    } finally {
      setBusy(undefined);
    }
  }
  if (!isConfigured(job)) {
    return (
      <div class="run-now">
        <p class="not-configured hint" data-testid="not-configured">
          Not ready to run: {notConfiguredText(job)}.{' '}
          {session.can('settings.manage') ? <a href={`/jobs/${job.id}#settings`}>Configure it</a> : 'An administrator can configure it.'}
        </p>
        {/* A run that failed because the config went away meanwhile still says so. */}
        {outcome && <Notice kind={outcome.kind}>{outcome.text}</Notice>}
      </div>
    );
  }
  // Before a first run, Run now appears once the preview has been seen.
  const offerRun = !firstRun || preview !== undefined;
  return (
    <div class="run-now">
      <div class="form-actions">
        {offerRun && (
          <button type="button" class="primary" onClick={run} disabled={busy !== undefined} aria-busy={busy === 'run'}>
            {busy === 'run' ? 'Running…' : 'Run now'}
          </button>
        )}
        <button type="button" class={offerRun ? undefined : 'primary'} onClick={dryRun} disabled={busy !== undefined} aria-busy={busy === 'preview'}>
          {busy === 'preview' ? 'Asking…' : firstRun && !preview ? 'Preview the first run' : 'Preview changes'}
        </button>
      </div>
      {firstRun && !preview && !outcome && <p class="hint">It has never run: see what it would change before it changes anything.</p>}
      {preview && <RunPreview preview={preview} />}
      {outcome && <Notice kind={outcome.kind}>{outcome.text}</Notice>}
    </div>
  );
}

/** A dry run's answer: each field that would change, now and after, flags as on/off. */
function RunPreview({ preview }: { preview: DryRun }) {
  if (preview.changes.length === 0) {
    return (
      <Notice kind="success">
        <span data-testid="run-preview">{preview.summary}: the registry already matches. Nothing was written.</span>
      </Notice>
    );
  }
  return (
    <div class="run-preview" data-testid="run-preview">
      <p>
        <strong>{preview.summary}</strong> if it runs now. This is a preview: nothing was written.
      </p>
      <div class="table-wrap changes">
        <table>
          <thead>
            <tr>
              <th scope="col">Instance</th>
              <th scope="col">Field</th>
              <th scope="col">Now</th>
              <th scope="col">After the run</th>
            </tr>
          </thead>
          <tbody>
            {preview.changes.slice(0, PREVIEW_ROWS).map((change) => {
              const shown = historyChange(change.field, String(change.old), String(change.new));
              return (
                <tr key={`${change.vmid}-${change.field}`} data-vmid={change.vmid} data-field={change.field}>
                  <td>
                    {change.name} <span class="muted">{change.vmid}</span>
                  </td>
                  <td>{shown.label}</td>
                  <td class="old">{shown.from}</td>
                  <td class="new">{shown.to}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {preview.changes.length > PREVIEW_ROWS && <p class="hint">and {plural(preview.changes.length - PREVIEW_ROWS, 'more change')}.</p>}
    </div>
  );
}
