import { useState } from 'preact/hooks';
import { api, messageOf } from '../../api';
import { Notice, Time } from '../../components/ui';
import type { HostDetail } from '../../../server/contract/hosts';
import type { Operation } from '../../../server/contract/operations';
import { operationWhat } from './operationLive';

/**
 * The host's operations, newest first, live: status for everyone, output for operators, cancel
 * while pending, and a request for the agent's own logs.
 */
export function OperationsCard(props: { host: HostDetail; operations: Operation[]; can: { operate: boolean; diagnostics: boolean } }) {
  const { host: h, operations, can } = props;
  const [outputs, setOutputs] = useState<Record<string, string | null>>({});
  const [message, setMessage] = useState<string>();
  const toggle = async (id: string) => {
    if (id in outputs) return setOutputs(({ [id]: _, ...rest }) => rest);
    try {
      const op = await api('GET /api/operations/:id', { params: { id } });
      setOutputs((o) => ({ ...o, [id]: op.output ?? null }));
    } catch (e) {
      setMessage(messageOf(e));
    }
  };
  const act = (call: () => Promise<unknown>) => call().then(() => setMessage(undefined), (e) => setMessage(messageOf(e)));
  return (
    <div class="card" data-testid="operations">
      <h2>Operations</h2>
      {message && <Notice kind="error">{message}</Notice>}
      {can.diagnostics && h.status === 'online' && (
        <p>
          <button type="button" onClick={() => void act(() => api('POST /api/hosts/:id/logs', { params: { id: h.id } }))}>
            Fetch the agent’s logs
          </button>
        </p>
      )}
      {operations.length === 0 ? (
        <p class="muted">Nothing was asked of this host yet.</p>
      ) : (
        <ul class="plain operations">
          {operations.slice(0, 30).map((op) => (
            <li key={op.id} data-operation={op.id}>
              <span class={`badge badge-op-${op.status}`} data-testid={`op-${op.id}`} data-status={op.status}>
                {op.status}
              </span>{' '}
              {operationWhat(op)} <span class="muted">by {op.requested_by ?? 'homefleet'}</span> <Time iso={op.requested_at} exact={false} />
              {op.exit_code !== null && <span class="muted"> exit {op.exit_code}</span>}
              {op.reason && <span class="muted"> — {op.reason}</span>}{' '}
              {can.diagnostics && op.sent_at && (
                <button type="button" class="link" onClick={() => void toggle(op.id)}>
                  {op.id in outputs ? 'hide output' : 'output'}
                </button>
              )}
              {can.operate && op.status === 'pending' && (op.type === 'guest.action' || op.type === 'logs') && (
                <button type="button" class="link" onClick={() => void act(() => api('DELETE /api/operations/:id', { params: { id: op.id } }))}>
                  cancel
                </button>
              )}
              {op.id in outputs && <pre class="config-view">{outputs[op.id] || '(no output)'}</pre>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
