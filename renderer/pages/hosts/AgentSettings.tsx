import { useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { Notice } from '../../components/ui';
import type { Collector, Collectors, HostDetail } from '../../../server/contract/hosts';
import type { HostPatch } from '../../../server/contract/inputs/hosts';
import type { AgentChannel } from '../../../server/contract/versions';
import { channelVersions } from './versions';

/** What each collector is, as an operator reads it. */
const COLLECTOR_TEXT: Record<Collector, string> = {
  metrics: 'metrics (host and guest CPU, memory, disk, network)',
  configs: 'configs (qm config / pct config, kept with diffs)',
  storage: 'storage (storages and their ISO, template and snippet volumes)',
  backups: 'backups (stored and sent; the agent collects them from a later version)',
};
const COLLECTOR_NAMES = Object.keys(COLLECTOR_TEXT) as Collector[];

interface Draft {
  agent_channel: AgentChannel;
  agent_pin: string | null;
  collectors: Collectors;
}

/** Only what changed: an unchanged pin is not sent again (the server checks a pin it is given against what it ships now). */
function changesOf(host: HostDetail, draft: Draft): HostPatch | undefined {
  const patch: HostPatch = {};
  if (draft.agent_channel !== host.agent_channel) patch.agent_channel = draft.agent_channel;
  if (draft.agent_pin !== host.agent_pin) patch.agent_pin = draft.agent_pin;
  const collectors = COLLECTOR_NAMES.filter((c) => draft.collectors[c] !== host.collectors[c]);
  if (collectors.length) patch.collectors = Object.fromEntries(collectors.map((c) => [c, draft.collectors[c]]));
  return Object.keys(patch).length ? patch : undefined;
}

/**
 * The host's agent release channel, pin and collectors (PRODUCT.md "Release channels", "Plugins"):
 * read by everyone who sees the host, changed by those with hosts.manage.
 */
export function AgentSettingsCard(props: { host: HostDetail; shipped: string[] | undefined; manage: boolean; onSaved: (h: HostDetail) => void }) {
  const { host: h } = props;
  const [draft, setDraft] = useState<Draft>();
  const [message, setMessage] = useState<{ kind: 'error' | 'success'; text: string }>();
  const start = () => {
    setMessage(undefined);
    setDraft({ agent_channel: h.agent_channel, agent_pin: h.agent_pin, collectors: { ...h.collectors } });
  };
  const save = async (e: Event) => {
    e.preventDefault();
    if (!draft) return;
    const patch = changesOf(h, draft);
    if (!patch) return setDraft(undefined);
    try {
      props.onSaved(await api('PATCH /api/hosts/:id', { params: { id: h.id }, body: patch }));
      setDraft(undefined);
      setMessage({ kind: 'success', text: 'Agent settings saved; the agent takes its collectors at its next heartbeat.' });
    } catch (err) {
      setMessage({ kind: 'error', text: messageOf(err) });
    }
  };
  // The pin's choices follow the channel picked; a pin the server no longer ships stays listed while it is the pin.
  const choices = draft ? channelVersions(props.shipped ?? [], draft.agent_channel) : [];
  if (draft?.agent_pin && !choices.includes(draft.agent_pin)) choices.unshift(draft.agent_pin);

  return (
    <div class="card" data-testid="agent-settings">
      <h2>Agent settings</h2>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      {!draft ? (
        <>
          <dl class="policy">
            <dt>Release channel</dt>
            <dd data-testid="agent-channel">{h.agent_channel === 'beta' ? 'beta (pre-releases and releases)' : 'stable (releases only)'}</dd>
            <dt>Pinned to</dt>
            <dd data-testid="agent-pin">{h.agent_pin ? <span class="mono">{h.agent_pin}</span> : 'no version (upgrades follow the channel)'}</dd>
            <dt>Collectors</dt>
            <dd data-testid="agent-collectors">
              {COLLECTOR_NAMES.map((c) => `${c} ${h.collectors[c] ? 'on' : 'off'}`).join(', ')}
            </dd>
          </dl>
          {props.manage && (
            <button type="button" onClick={start}>
              Edit agent settings…
            </button>
          )}
        </>
      ) : (
        <form onSubmit={save} class="stack">
          <label>
            Release channel{' '}
            <select value={draft.agent_channel} onChange={(e) => setDraft({ ...draft, agent_channel: e.currentTarget.value as AgentChannel })}>
              <option value="stable">stable: releases only</option>
              <option value="beta">beta: pre-releases too</option>
            </select>
          </label>
          <label>
            Pin the agent to{' '}
            <select value={draft.agent_pin ?? ''} onChange={(e) => setDraft({ ...draft, agent_pin: e.currentTarget.value || null })}>
              <option value="">no version: offer upgrades on the channel</option>
              {choices.map((v) => (
                <option value={v}>{v}</option>
              ))}
            </select>
          </label>
          <fieldset class="field">
            <legend>Collectors</legend>
            {COLLECTOR_NAMES.map((c) => (
              <label class="check">
                <input
                  type="checkbox"
                  name={c}
                  checked={draft.collectors[c]}
                  onChange={(e) => setDraft({ ...draft, collectors: { ...draft.collectors, [c]: e.currentTarget.checked } })}
                />{' '}
                {COLLECTOR_TEXT[c]}
              </label>
            ))}
          </fieldset>
          <div class="actions">
            <button type="submit" class="primary">
              Save
            </button>
            <button type="button" onClick={() => setDraft(undefined)}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </div>
  );
}
