import { useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { Confirm, Notice } from '../../components/ui';
import type { CreatedEnrollmentToken, HostDetail } from '../../../server/contract/hosts';
import { InstallCommand } from './Enrollment';

/**
 * The host's own credential (administrators): revoke a leaked host token, and make the re-bind token
 * that enrolls this machine again onto this host. An ordinary install command cannot do that: a
 * machine id is no secret, so the server answers 409 to any token not made for this host.
 */
export function HostToken({ host: h, reload }: { host: HostDetail; reload: () => void }) {
  const [step, setStep] = useState<'idle' | 'revoke' | 'rebind'>('idle');
  const [revoked, setRevoked] = useState(false);
  const [created, setCreated] = useState<CreatedEnrollmentToken>();
  const [error, setError] = useState<string>();

  async function run(action: () => Promise<void>) {
    setStep('idle');
    setError(undefined);
    try {
      await action();
    } catch (e) {
      setError(messageOf(e));
    }
    reload();
  }
  const revoke = () =>
    run(async () => {
      await api('POST /api/hosts/:id/revoke-token', { params: { id: h.id } });
      setRevoked(true);
    });
  const makeRebind = () =>
    run(async () => {
      setCreated(await api('POST /api/hosts/enrollment-tokens', { body: { host_id: h.id, name: `re-bind ${h.hostname}` } }));
    });

  return (
    <div class="host-token">
      <h3>Host token</h3>
      {error && <Notice kind="error">{error}</Notice>}
      {revoked && (
        <Notice kind="success">
          <span data-testid="token-revoked">
            Host token revoked: the agent on {h.hostname} can no longer report with it. The ordinary install command will not enroll this machine again (it
            already has a host here); to bring it back, make a re-bind token and run its command on {h.hostname}.
          </span>
        </Notice>
      )}
      {!revoked && step === 'idle' && !created && (
        <p class="hint">The agent reports with a host token of its own. If that token leaked, revoke it, then enroll the host again with a re-bind token.</p>
      )}
      {h.allow_rebind && !created && (
        <p data-testid="rebind-waiting">
          A re-bind token for this host is waiting to be used (see <a href="/hosts">Enrollment tokens</a>).
        </p>
      )}
      {created && (
        <InstallCommand created={created} testId="rebind-command" onDone={() => setCreated(undefined)}>
          Run this as root on {h.hostname} to enroll it again (elsewhere than on a Proxmox node, put <code>sudo</code> before <code>bash</code>). It enrolls only
          this machine, once, onto this host: same record, guests and history, with a new host token.
        </InstallCommand>
      )}
      {!created && step === 'revoke' && (
        <Confirm
          label={`Confirm revoking the host token of ${h.hostname}`}
          question={`Revoke the host token of ${h.hostname}? Its agent stops reporting at once, until it is enrolled again with a re-bind token.`}
          action="Revoke host token"
          onConfirm={() => void revoke()}
          onCancel={() => setStep('idle')}
        />
      )}
      {!created && step === 'rebind' && (
        <Confirm
          label={`Make a re-bind token for ${h.hostname}`}
          question={
            <>
              A re-bind token enrolls this machine (<span class="mono">{h.machine_id}</span>) again as this host, keeping its record, guests and history, with a new
              host token; a host token still valid is revoked then. Use it after revoking a leaked token, or when the agent’s files on the host were lost. It works
              once, only on this machine, and expires in a day.
            </>
          }
          action="Make re-bind token"
          danger={false}
          onConfirm={() => void makeRebind()}
          onCancel={() => setStep('idle')}
        />
      )}
      {!created && step === 'idle' && (
        <div class="form-actions">
          <button type="button" onClick={() => setStep('revoke')}>
            Revoke host token…
          </button>
          <button type="button" onClick={() => setStep('rebind')}>
            Make a re-bind token…
          </button>
        </div>
      )}
    </div>
  );
}
