import { api } from '../api';
import { Time, useLoad } from '../components/ui';
import { useSession } from '../session';
import type { DeploySpec } from '../../server/contract/provisioning';
import { deploySource, networkText } from './hosts/deployForm';

/**
 * How homefleet deployed an instance's guest (what a rebuild uses again): its source, sizes,
 * network, user, keys and cloud config. Keys are named as they were when launched with; their
 * fingerprints (or that one was deleted since) come from GET /api/server-keys where the reader may list it.
 */
export function DeployedFrom({ spec }: { spec: DeploySpec }) {
  const session = useSession();
  const keys = useLoad(() => (session.can('fleet.operate') && spec.server_key_ids.length ? api('GET /api/server-keys') : Promise.resolve([])), [spec.server_key_ids.join(',')]);
  const keyName = (id: number, i: number) => {
    const name = spec.server_key_names[i] ?? `key ${id}`;
    const key = keys.data?.find((k) => k.id === id);
    return key ? `${key.name} (${key.fingerprint})` : `${name}${keys.data && session.can('fleet.operate') ? ' (deleted since)' : ''}`;
  };
  const sizes = [spec.cores !== null && `${spec.cores} cores`, spec.memory_mb !== null && `${spec.memory_mb} MiB memory`, spec.disk_gb !== null && `${spec.disk_gb} GiB disk`].filter(Boolean);
  return (
    <div class="card" data-testid="deployed-from">
      <h2>Deployed from</h2>
      <dl class="props">
        <dt>Source</dt>
        <dd data-testid="deploy-source">
          {deploySource(spec)}
          {spec.source_type !== 'volume' && (spec.full ? ', full clone' : ', linked clone')} on <a href={`/hosts/${spec.host_id}`}>host {spec.host_id}</a>
        </dd>
        <dt>Storage</dt>
        <dd class="mono">{spec.storage ?? <span class="muted">the template’s</span>}</dd>
        <dt>Sizes</dt>
        <dd>{sizes.length ? sizes.join(', ') : <span class="muted">the template’s</span>}</dd>
        <dt>Network</dt>
        <dd class="mono" data-testid="deploy-network">
          {networkText(spec.network)}
        </dd>
        <dt>Cloud-init user</dt>
        <dd class="mono">{spec.ci_user ?? <span class="muted">the template’s</span>}</dd>
        <dt>Server keys</dt>
        <dd data-testid="deploy-keys">{spec.server_key_ids.length ? spec.server_key_ids.map(keyName).join('; ') : <span class="muted">none</span>}</dd>
        <dt>Cloud config</dt>
        <dd>
          {spec.cloud_config_id === null ? (
            <span class="muted">none</span>
          ) : (
            <>
              {spec.cloud_config_name ?? `config ${spec.cloud_config_id}`}
              {spec.snippets_storage && <span class="muted"> in {spec.snippets_storage}</span>}
            </>
          )}
        </dd>
        <dt>Started</dt>
        <dd>{spec.start ? 'once deployed' : 'no'}</dd>
        <dt>Deployed</dt>
        <dd>
          by <span class="who">{spec.deployed_by}</span> · <Time iso={spec.deployed_at} />
        </dd>
      </dl>
    </div>
  );
}
