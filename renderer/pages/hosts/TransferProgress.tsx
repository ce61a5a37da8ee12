import { Notice } from '../../components/ui';
import { FailedOutput, OperationSteps, useOperation } from './operationProgress';

/**
 * A download or a push as it goes (the Deploy dialog's steps): `what` is the file and where it goes.
 * A failure shows the agent's output to roles that read it (Proxmox's or the agent's own words).
 */
export function TransferProgress(props: { operationId: string; what: string; volid: string; diagnostics: boolean }) {
  const { op, error } = useOperation(props.operationId);
  const status = op?.status ?? 'pending';
  return (
    <div data-testid="transfer-progress" aria-live="polite">
      <p>
        {props.what}:{' '}
        <span class={`badge badge-op-${status}`} data-testid="transfer-status" data-status={status}>
          {status}
        </span>
      </p>
      <OperationSteps status={status} />
      {error && <Notice kind="error">{error}</Notice>}
      {status === 'succeeded' && (
        <Notice kind="success">
          <span data-testid="transfer-done">
            Done: <code>{props.volid}</code> is on the host. The Storage section lists it once the agent next reports.
          </span>
        </Notice>
      )}
      {status === 'failed' && (
        <Notice kind="error">
          <span data-testid="transfer-failed">It failed (exit {op?.exit_code ?? '?'}).</span>
        </Notice>
      )}
      {(status === 'expired' || status === 'cancelled') && (
        <Notice kind="warning">{status === 'cancelled' ? 'It was cancelled before the agent took it.' : 'It expired: the agent did not report its result in time.'}</Notice>
      )}
      {status === 'failed' && <FailedOutput output={op?.output} diagnostics={props.diagnostics} testId="transfer-output" />}
    </div>
  );
}
