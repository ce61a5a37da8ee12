import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { useLive } from '../../live';
import { FINISHED_STATUSES, type Operation, type OperationStatus } from '../../../server/contract/operations';

/** How often the operation is read while it runs: the live event is faster, this covers a stream that is reconnecting. */
const POLL_MS = 2_000;

/**
 * One operation as it goes, pending → sent → succeeded or failed: live from `operation.updated`, read
 * again (with its output, for roles that read it) when it ends. Deploys, downloads and pushes follow it.
 */
export function useOperation(operationId: string): { op: Operation | undefined; error: string | undefined } {
  const [op, setOp] = useState<Operation>();
  const [error, setError] = useState<string>();
  const finished = useRef(false);
  const read = useCallback(
    () =>
      api('GET /api/operations/:id', { params: { id: operationId } }).then(
        (next) => {
          finished.current = FINISHED_STATUSES.includes(next.status);
          setOp(next);
        },
        (e) => setError(messageOf(e)),
      ),
    [operationId],
  );
  useEffect(() => {
    void read();
    const timer = setInterval(() => finished.current || void read(), POLL_MS);
    return () => clearInterval(timer);
  }, [read]);
  useLive(['operation.updated'], ({ data }) => {
    if (data.id !== operationId || finished.current) return;
    // The event carries no output: the end is read whole.
    if (FINISHED_STATUSES.includes(data.status)) void read();
    else setOp((o) => ({ ...data, output: o?.output ?? null }));
  });
  return { op, error };
}

/** The steps an operation goes through, those reached marked: asked → taken by the agent → its outcome. */
export function OperationSteps({ status }: { status: OperationStatus }) {
  const reached = (step: string) => status === step || (step === 'pending' ? true : step === 'sent' ? status !== 'pending' : false);
  return (
    <ol class="deploy-steps" aria-label="Progress">
      {['pending', 'sent', status === 'failed' || status === 'expired' || status === 'cancelled' ? status : 'succeeded'].map((step) => (
        <li key={step} class={reached(step) ? 'done' : undefined}>
          {step === 'pending' ? 'asked' : step === 'sent' ? 'taken by the agent' : step}
        </li>
      ))}
    </ol>
  );
}

/** A failed operation's output for the roles that read it (`diagnostics.read`), else who can. */
export function FailedOutput({ output, diagnostics, testId }: { output: string | null | undefined; diagnostics: boolean; testId: string }) {
  return diagnostics ? (
    <pre class="config-view" data-testid={testId}>
      {output || '(no output)'}
    </pre>
  ) : (
    <p class="hint">Operators and administrators can read the agent’s output.</p>
  );
}
