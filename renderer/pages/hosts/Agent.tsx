import { useState } from 'preact/hooks';
import { api } from '../../api';
import { Confirm, useLoad } from '../../components/ui';
import type { HostDetail } from '../../../server/contract/hosts';
import type { Act } from './parts';
import { compareVersions } from '../../../server/contract/versions';
import { channelVersions, rollbackTargets } from './versions';

/**
 * The agent versions this server ships (the signed manifest's list, the current one first), for
 * "Upgrade agent" and "Roll back agent": read once per page; undefined until known.
 */
export function useShippedAgents(): string[] | undefined {
  const manifest = useLoad(() => api('GET /api/agent/releases/manifest.json'), []);
  return manifest.data?.agents?.map((a) => a.version);
}

/**
 * Upgrade to the shipped agent, when the server says a newer one ships; roll back to an older shipped
 * version, asked for as a rollback (the agent refuses a downgrade otherwise) after a confirmation
 * naming the host and the version. With one version shipped there is nothing to roll back to.
 */
export function AgentActions({ host: h, shipped, act }: { host: HostDetail; shipped: string[] | undefined; act: Act }) {
  const [rollingBack, setRollingBack] = useState(false);
  const [picked, setPicked] = useState<string>();
  // The server moves a host only along its channel, and a pinned host only to its pin.
  const targets = shipped ? rollbackTargets(channelVersions(shipped, h.agent_channel), h.agent_version).filter((v) => !h.agent_pin || v === h.agent_pin) : [];
  const target = picked && targets.includes(picked) ? picked : targets[0];
  // A pinned host is never offered an upgrade, but an administrator may move it up to its pin.
  const toPin = h.agent_pin && compareVersions(h.agent_pin, h.agent_version) > 0 ? h.agent_pin : undefined;
  const upgradeTo = h.upgrade_to ?? toPin;
  if (!upgradeTo && !target) return null;
  return (
    <div class="agent-actions">
      {!rollingBack && (
        <div class="form-actions">
          {upgradeTo && (
            <button type="button" onClick={() => act(() => api('POST /api/hosts/:id/upgrade', { params: { id: h.id }, body: {} }), 'Upgrade requested; it is offered at the next heartbeat.')}>
              Upgrade agent to {upgradeTo}
            </button>
          )}
          {target && (
            <button type="button" onClick={() => setRollingBack(true)}>
              Roll back agent…
            </button>
          )}
        </div>
      )}
      {rollingBack && target && (
        <Confirm
          label={`Confirm rolling back the agent on ${h.hostname}`}
          question={
            <>
              Roll back the agent on {h.hostname} from <span class="mono">{h.agent_version}</span> to{' '}
              {targets.length > 1 ? (
                <select aria-label="Version to roll back to" value={target} onChange={(e) => setPicked(e.currentTarget.value)}>
                  {targets.map((v) => (
                    <option value={v}>{v}</option>
                  ))}
                </select>
              ) : (
                <span class="mono">{target}</span>
              )}
              ? The host installs it at its next heartbeat; if it does not report within 5 minutes, the agent’s watchdog puts {h.agent_version} back.
            </>
          }
          action={`Roll back ${h.hostname} to ${target}`}
          onConfirm={() => {
            setRollingBack(false);
            void act(() => api('POST /api/hosts/:id/upgrade', { params: { id: h.id }, body: { version: target, rollback: true } }), `Rollback to ${target} requested; it is offered at the next heartbeat.`);
          }}
          onCancel={() => setRollingBack(false)}
        />
      )}
    </div>
  );
}
