import { useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api';
import { Notice, useLoad } from '../components/ui';
import { useSession } from '../session';
import { CHECKS, type CheckName, type Policy } from '../../server/contract/fleet';
import { STACKS } from '../../server/contract/instance-fields';
import { CHECK_LABEL } from './FleetHealth';

type Draft = { kind: 'stack' | 'collection'; stack: string; collection: string; on: Partial<Record<CheckName, boolean>>; hours: string };

const toDraft = (p: Policy): Draft => ({
  kind: 'stack' in p.scope ? 'stack' : 'collection',
  stack: 'stack' in p.scope ? p.scope.stack : 'production',
  collection: 'collection_id' in p.scope ? String(p.scope.collection_id) : '',
  on: Object.fromEntries(CHECKS.filter((c) => c !== 'backed_up_within_h' && p.checks[c]).map((c) => [c, true])),
  hours: p.checks.backed_up_within_h === undefined ? '' : String(p.checks.backed_up_within_h),
});

function fromDraft(d: Draft): Policy {
  const checks: Record<string, true | number> = {};
  for (const c of CHECKS) if (c !== 'backed_up_within_h' && d.on[c]) checks[c] = true;
  if (d.hours.trim() !== '') checks.backed_up_within_h = Number(d.hours);
  const scope = d.kind === 'stack' ? { stack: d.stack } : { collection_id: Number(d.collection) };
  return { scope, checks } as Policy;
}

const describe = (p: Policy, name: (id: number) => string | undefined) =>
  'stack' in p.scope ? `instances on the ${p.scope.stack} stack` : `instances of collection ${name(p.scope.collection_id) ?? p.scope.collection_id}`;

/**
 * Settings → Fleet-health policies: which checks the instances of each stack or collection must pass.
 * Administrators edit the list and save it whole; everyone else reads it.
 */
export function PolicySettings() {
  const session = useSession();
  const editable = session.can('settings.manage');
  const policies = useLoad(() => api('GET /api/policies'), []);
  const collections = useLoad(() => api('GET /api/collections'), []);
  const collectionName = (id: number) => collections.data?.find((c) => c.id === id)?.name;
  const [drafts, setDrafts] = useState<Draft[]>();
  const [error, setError] = useState<string>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const [done, setDone] = useState<string>();
  const [busy, setBusy] = useState(false);

  const list = drafts ?? policies.data?.map(toDraft);
  const change = (i: number, patch: Partial<Draft>) => setDrafts(list!.map((d, n) => (n === i ? { ...d, ...patch } : d)));

  async function save(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setFields({});
    setDone(undefined);
    try {
      const saved = await api('PUT /api/policies', { body: list!.map(fromDraft) });
      policies.update(() => saved);
      setDrafts(undefined);
      setDone('Policies saved. The fleet is checked against them from now on.');
    } catch (e) {
      setError(`Not saved: ${messageOf(e)}`);
      if (e instanceof ApiError) setFields(e.fields);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="card span-all policies" id="policies" data-testid="policies">
      <h2>Fleet-health policies</h2>
      <p>
        Each policy names the instances it covers (a stack, or a collection by its id) and the checks they must pass. An instance covered by several is held to all of
        them. The results are on the <a href="/health">Fleet health</a> page; a check failing for an hour raises the <code>policy.failed</code> alert.
      </p>
      {policies.error && <Notice kind="error">{policies.error}</Notice>}
      {list && !editable && (
        <ul data-testid="policy-list">
          {list.map(fromDraft).map((p, i) => (
            <li key={i}>
              {describe(p, collectionName)}:{' '}
              {CHECKS.filter((c) => p.checks[c] !== undefined)
                .map((c) => (c === 'backed_up_within_h' ? `backed up within ${p.checks.backed_up_within_h} h` : CHECK_LABEL[c].toLowerCase()))
                .join(', ')}
            </li>
          ))}
          {list.length === 0 && <li class="muted">No policies: nothing is checked.</li>}
        </ul>
      )}
      {list && editable && (
        <form onSubmit={save}>
          {list.map((d, i) => (
            <div class="policy-edit" role="group" aria-labelledby={`policy-${i}-title`} key={i} data-policy={i}>
              <h3 id={`policy-${i}-title`}>Policy {i + 1}</h3>
              <div class="filters">
                <div class="field">
                  <label for={`policy-${i}-kind`}>Covers</label>
                  <select id={`policy-${i}-kind`} value={d.kind} onChange={(e) => change(i, { kind: (e.target as HTMLSelectElement).value as Draft['kind'] })}>
                    <option value="stack">a stack</option>
                    <option value="collection">a collection</option>
                  </select>
                </div>
                {d.kind === 'stack' ? (
                  <div class="field">
                    <label for={`policy-${i}-stack`}>Stack</label>
                    <select id={`policy-${i}-stack`} value={d.stack} onChange={(e) => change(i, { stack: (e.target as HTMLSelectElement).value })}>
                      {STACKS.map((s) => (
                        <option key={s} value={s}>
                          {s}
                        </option>
                      ))}
                    </select>
                  </div>
                ) : (
                  <div class="field">
                    <label for={`policy-${i}-collection`}>Collection</label>
                    <select id={`policy-${i}-collection`} value={d.collection} onChange={(e) => change(i, { collection: (e.target as HTMLSelectElement).value })}>
                      <option value="">choose a collection</option>
                      {d.collection && !collections.data?.some((c) => String(c.id) === d.collection) && <option value={d.collection}>collection {d.collection} (gone)</option>}
                      {collections.data?.map((c) => (
                        <option key={c.id} value={String(c.id)}>
                          {c.name}
                        </option>
                      ))}
                    </select>
                  </div>
                )}
                <div class="field">
                  <label for={`policy-${i}-hours`}>Backed up within (hours)</label>
                  <input id={`policy-${i}-hours`} inputMode="numeric" placeholder="not checked" value={d.hours} onInput={(e) => change(i, { hours: (e.target as HTMLInputElement).value })} />
                </div>
              </div>
              <div class="checks">
                {CHECKS.filter((c) => c !== 'backed_up_within_h').map((c) => (
                  <label class="check" key={c}>
                    <input type="checkbox" name={c} checked={!!d.on[c]} onChange={(e) => change(i, { on: { ...d.on, [c]: (e.target as HTMLInputElement).checked } })} /> {CHECK_LABEL[c]}
                  </label>
                ))}
              </div>
              {Object.entries(fields)
                .filter(([f]) => f.startsWith(`${i}.`))
                .map(([f, m]) => (
                  <p class="field-error" key={f}>
                    {f.slice(String(i).length + 1)}: {m}
                  </p>
                ))}
              <button type="button" onClick={() => setDrafts(list.filter((_, n) => n !== i))}>
                Remove this policy
              </button>
            </div>
          ))}
          {error && <Notice kind="error">{error}</Notice>}
          {done && <Notice kind="success">{done}</Notice>}
          <div class="form-actions">
            <button type="button" onClick={() => setDrafts([...list, { kind: 'stack', stack: 'production', collection: '', on: { running: true }, hours: '' }])}>
              Add a policy
            </button>
            <button type="submit" class="primary" disabled={busy}>
              {busy ? 'Saving…' : 'Save policies'}
            </button>
          </div>
        </form>
      )}
    </div>
  );
}
