import { Notice } from '../../components/ui';
import type { DeployInput } from '../../../server/contract/inputs/provisioning';
import { addressText, failedStep } from './deployForm';
import { FailedOutput, OperationSteps, useOperation } from './operationProgress';

/**
 * A deploy's operation as it goes (useOperation): on success a link to the new instance and its
 * address; on failure the step that failed and the agent's output.
 */
export function DeployProgress(props: { operationId: string; vmid: number; network: DeployInput['network']; diagnostics: boolean }) {
  const { op, error } = useOperation(props.operationId);
  const status = op?.status ?? 'pending';
  const failure = op?.status === 'failed' ? failedStep(op.output) : undefined;
  return (
    <div data-testid="deploy-progress" aria-live="polite">
      <p>
        Guest <strong>{props.vmid}</strong>:{' '}
        <span class={`badge badge-op-${status}`} data-testid="deploy-status" data-status={status}>
          {status}
        </span>
      </p>
      <OperationSteps status={status} />
      {error && <Notice kind="error">{error}</Notice>}
      {status === 'succeeded' && (
        <Notice kind="success">
          <span data-testid="deploy-done">
            Guest {props.vmid} is deployed: <a href={`/instances/${props.vmid}`}>instance {props.vmid}</a>. Address: {addressText(props.network)}.
          </span>
        </Notice>
      )}
      {status === 'failed' && (
        <Notice kind="error">
          <span data-testid="deploy-failed">
            {failure && 'step' in failure ? (
              <>
                The deploy failed at: <code>{failure.step}</code> (exit {failure.exit}){failure.after ? `; ${failure.after}` : ''}.
              </>
            ) : failure ? (
              <>The agent refused it: {failure.refused}.</>
            ) : (
              <>The deploy failed (exit {op?.exit_code ?? '?'}).</>
            )}{' '}
            Its registry instance {props.vmid} was removed.
          </span>
        </Notice>
      )}
      {(status === 'expired' || status === 'cancelled') && (
        <Notice kind="warning">{status === 'cancelled' ? 'The deploy was cancelled before the agent took it.' : 'The deploy expired: the agent did not report its result in time.'}</Notice>
      )}
      {status === 'failed' && <FailedOutput output={op?.output} diagnostics={props.diagnostics} testId="deploy-output" />}
    </div>
  );
}
