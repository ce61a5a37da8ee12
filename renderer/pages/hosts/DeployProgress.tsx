import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { Notice } from '../../components/ui';
import { useLive } from '../../live';
import type { DeployInput } from '../../../server/contract/inputs/provisioning';
import { FINISHED_STATUSES, type Operation } from '../../../server/contract/operations';
import { addressText, failedStep } from './deployForm';

/** How often the operation is read while it runs: the live event is faster, this covers a stream that is reconnecting. */
const POLL_MS = 2_000;

/**
 * A deploy's operation as it goes, pending → sent → succeeded or failed: live from
 * `operation.updated`, read again (with its output, for roles that read it) when it ends. On success a
 * link to the new instance and its address; on failure the step that failed and the agent's output.
 */
export function DeployProgress(props: { operationId: string; vmid: number; network: DeployInput['network']; diagnostics: boolean }) {
  const [op, setOp] = useState<Operation>();
  const [error, setError] = useState<string>();
  const finished = useRef(false);
  const read = useCallback(
    () =>
      api('GET /api/operations/:id', { params: { id: props.operationId } }).then(
        (next) => {
          finished.current = FINISHED_STATUSES.includes(next.status);
          setOp(next);
        },
        (e) => setError(messageOf(e)),
      ),
    [props.operationId],
  );
  useEffect(() => {
    void read();
    const timer = setInterval(() => finished.current || void read(), POLL_MS);
    return () => clearInterval(timer);
  }, [read]);
  useLive(['operation.updated'], ({ data }) => {
    if (data.id !== props.operationId || finished.current) return;
    // The event carries no output: the end is read whole.
    if (FINISHED_STATUSES.includes(data.status)) void read();
    else setOp((o) => ({ ...data, output: o?.output ?? null }));
  });

  const status = op?.status ?? 'pending';
  const reached = (step: string) => status === step || (step === 'pending' ? true : step === 'sent' ? status !== 'pending' : false);
  const failure = op?.status === 'failed' ? failedStep(op.output) : undefined;
  return (
    <div data-testid="deploy-progress" aria-live="polite">
      <p>
        Guest <strong>{props.vmid}</strong>:{' '}
        <span class={`badge badge-op-${status}`} data-testid="deploy-status" data-status={status}>
          {status}
        </span>
      </p>
      <ol class="deploy-steps" aria-label="Progress">
        {['pending', 'sent', status === 'failed' || status === 'expired' || status === 'cancelled' ? status : 'succeeded'].map((step) => (
          <li key={step} class={reached(step) ? 'done' : undefined}>
            {step === 'pending' ? 'asked' : step === 'sent' ? 'taken by the agent' : step}
          </li>
        ))}
      </ol>
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
      {status === 'failed' &&
        (props.diagnostics ? (
          <pre class="config-view" data-testid="deploy-output">
            {op?.output || '(no output)'}
          </pre>
        ) : (
          <p class="hint">Operators and administrators can read the agent’s output.</p>
        ))}
    </div>
  );
}
