import { useMemo, useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { Badge, Confirm, Empty, Loading, Notice, PageTitle, Time, useLoad } from '../../components/ui';
import { useLive } from '../../live';
import { navigate } from '../../router';
import { useSession } from '../../session';
import type { Campaign, CampaignSummary, CampaignTarget } from '../../../server/contract/campaigns';
import { finishedWords, stepWords, targetWords } from './campaignForm';
import { NewCampaignDialog } from './NewCampaignDialog';

/** Script names by id, so a script step is named (read once per page; viewers may read the summaries). */
function useScriptNames(): ReadonlyMap<number, string> | undefined {
  const scripts = useLoad(() => api('GET /api/scripts'), []);
  return useMemo(() => scripts.data && new Map(scripts.data.map((s) => [s.id, s.name])), [scripts.data]);
}

const progress = (c: CampaignSummary) => {
  const total = Object.values(c.counts).reduce((a, b) => a + b, 0);
  const done = c.counts.succeeded + c.counts.failed + c.counts.skipped + c.counts.cancelled;
  return `${done} of ${total}`;
};

/** Campaigns, newest first, live; operators start new ones from here. */
export function CampaignsPage() {
  const session = useSession();
  const list = useLoad(() => api('GET /api/campaigns'), []);
  const scripts = useScriptNames();
  const [creating, setCreating] = useState(false);
  useLive(['campaign.updated', 'reset'], (event) => {
    if (event.type === 'reset') return list.reload();
    const c = event.data;
    list.update((all) => (all.some((x) => x.id === c.id) ? all.map((x) => (x.id === c.id ? c : x)) : [c, ...all]));
  });
  return (
    <>
      <PageTitle title="Campaigns">
        {session.can('fleet.operate') && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New campaign…
          </button>
        )}
      </PageTitle>
      {list.error && <Notice kind="error">{list.error}</Notice>}
      {list.loading && !list.data && <Loading />}
      {list.data && list.data.length === 0 && <Empty title="No campaigns yet.">A campaign runs one action, script or agent upgrade over many guests or hosts, in waves.</Empty>}
      {list.data && list.data.length > 0 && (
        <table class="list" data-testid="campaigns">
          <thead>
            <tr>
              <th>Name</th>
              <th>Status</th>
              <th>Step</th>
              <th>Done</th>
              <th>Started</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((c) => (
              <tr key={c.id} data-campaign={c.id}>
                <td>
                  <a href={`/campaigns/${c.id}`}>{c.name}</a>
                </td>
                <td>
                  <Badge value={c.status} />
                </td>
                <td>{stepWords(c.step, scripts)}</td>
                <td>
                  {progress(c)}
                  {c.failures > 0 && <span class="muted"> · {c.failures} failed</span>}
                </td>
                <td>
                  <Time iso={c.created_at} exact={false} /> <span class="muted">by {c.created_by ?? 'homefleet'}</span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {creating && <NewCampaignDialog onClose={() => setCreating(false)} onStarted={(id) => navigate(`/campaigns/${id}`)} />}
    </>
  );
}

/** One campaign: live progress wave by wave, each target's operation and its output, pause, resume and cancel. */
export function CampaignPage(props: { id: string }) {
  const id = Number(props.id);
  const session = useSession();
  const operate = session.can('fleet.operate');
  const campaign = useLoad(() => api('GET /api/campaigns/:id', { params: { id } }), [id]);
  const scripts = useScriptNames();
  const [message, setMessage] = useState<string>();
  const [confirming, setConfirming] = useState(false);
  useLive(['campaign.updated', 'reset'], (event) => {
    if (event.type === 'reset' || event.data.id === id) campaign.reload();
  });
  const c = campaign.data;
  if (!c) return campaign.error ? <Notice kind="error">{campaign.error}</Notice> : <Loading />;

  const act = async (to: 'pause' | 'resume' | 'cancel') => {
    setConfirming(false);
    try {
      const key = to === 'pause' ? 'POST /api/campaigns/:id/pause' : to === 'resume' ? 'POST /api/campaigns/:id/resume' : 'POST /api/campaigns/:id/cancel';
      const next = await api(key, { params: { id } });
      campaign.update(() => next);
      setMessage(undefined);
    } catch (e) {
      setMessage(messageOf(e));
    }
  };
  const ended = c.status === 'succeeded' || c.status === 'failed' || c.status === 'cancelled';
  const finished = finishedWords(c, c.targets);
  return (
    <>
      <PageTitle title={c.name}>
        {operate && c.status === 'running' && (
          <button type="button" onClick={() => void act('pause')}>
            Pause
          </button>
        )}
        {operate && c.status === 'paused' && (
          <button type="button" class="primary" onClick={() => void act('resume')}>
            Resume
          </button>
        )}
        {operate && !ended && !confirming && (
          <button type="button" class="danger" onClick={() => setConfirming(true)}>
            Cancel campaign…
          </button>
        )}
      </PageTitle>
      {confirming && (
        <Confirm
          label="Cancel the campaign"
          question={`Cancel “${c.name}”? Operations not yet sent to agents are cancelled; those already running finish; nothing else starts.`}
          action={`Cancel “${c.name}”`}
          onConfirm={() => void act('cancel')}
          onCancel={() => setConfirming(false)}
        />
      )}
      {message && <Notice kind="error">{message}</Notice>}
      <p data-testid="campaign-status">
        <Badge value={c.status} /> <span data-testid="campaign-state" data-status={c.status}>{stepWords(c.step, scripts)}</span>, waves of {c.wave_size}
        {c.pause_s ? ` with ${c.pause_s} s between them` : ''}, {c.max_failures} failure{c.max_failures === 1 ? '' : 's'} allowed · wave {c.current_wave} of {c.waves} · {progress(c)} done
        {c.next_wave_at && (
          <span class="muted">
            {' '}
            · next wave <Time iso={c.next_wave_at} exact={false} />
          </span>
        )}
        <span class="muted">
          {' '}
          · started <Time iso={c.created_at} exact={false} /> by {c.created_by ?? 'homefleet'}
        </span>
      </p>
      {finished && (
        <Notice kind={c.counts.failed ? 'warning' : c.status === 'succeeded' ? 'success' : 'info'}>
          <span data-testid="campaign-finished">{finished}</span>
        </Notice>
      )}
      {Array.from({ length: c.waves }, (_, i) => i + 1).map((wave) => (
        <Wave key={wave} title={`Wave ${wave}${wave === c.current_wave && !ended ? ' (now)' : ''}`} wave={wave} targets={c.targets.filter((t) => t.wave === wave)} diagnostics={session.can('diagnostics.read')} />
      ))}
      {c.targets.some((t) => t.wave === 0) && <Wave title="Skipped when the campaign was made" wave={0} targets={c.targets.filter((t) => t.wave === 0)} diagnostics={false} />}
    </>
  );
}

function Wave(props: { title: string; wave: number; targets: CampaignTarget[]; diagnostics: boolean }) {
  const [outputs, setOutputs] = useState<Record<string, string | null>>({});
  const toggle = async (opId: string) => {
    if (opId in outputs) return setOutputs(({ [opId]: _, ...rest }) => rest);
    try {
      const op = await api('GET /api/operations/:id', { params: { id: opId } });
      setOutputs((o) => ({ ...o, [opId]: op.output ?? null }));
    } catch (e) {
      setOutputs((o) => ({ ...o, [opId]: messageOf(e) }));
    }
  };
  return (
    <div class="card" data-testid={`wave-${props.wave}`}>
      <h2>{props.title}</h2>
      <table class="list">
        <tbody>
          {props.targets.map((t) => (
            <tr key={`${t.host_id}-${t.vmid}`} data-target={t.vmid ?? t.name} data-status={t.status}>
              <td>{targetWords(t)}</td>
              <td>{t.host_id !== null ? <a href={`/hosts/${t.host_id}`}>{t.hostname ?? `host ${t.host_id}`}</a> : <span class="muted">no host</span>}</td>
              <td>
                <span class={`badge badge-op-${t.status === 'running' ? 'sent' : t.status === 'skipped' || t.status === 'waiting' || t.status === 'pending' ? 'cancelled' : t.status}`}>{t.status}</span>
                {t.reason && <span class="muted"> {t.reason}</span>}
              </td>
              <td>
                {t.operation_id && props.diagnostics && (
                  <button type="button" class="link" onClick={() => void toggle(t.operation_id!)}>
                    {t.operation_id in outputs ? 'hide output' : 'output'}
                  </button>
                )}
                {t.operation_id && t.operation_id in outputs && <pre class="config-view">{outputs[t.operation_id] || '(no output)'}</pre>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
