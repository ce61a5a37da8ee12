import { useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api';
import { TagChips } from '../components/Tags';
import { Badge, Confirm, Empty, Field, Loading, Notice, PageTitle, useLoad } from '../components/ui';
import { plural } from '../format';
import { filterQuery, filterWords, parseTagText } from '../query';
import { navigate } from '../router';
import { useSession } from '../session';
import { STACKS, STATES } from '../../server/contract/registry';
import type { Collection, CollectionFilter } from '../../server/contract/collections';

/** Collections: saved filters over the instances. Everyone reads them; operators and administrators edit them. */
export function CollectionsPage() {
  const session = useSession();
  const list = useLoad(() => api('GET /api/collections'), []);
  return (
    <section>
      <PageTitle title="Collections" />
      <p class="muted">
        A collection is a saved filter: it holds the instances that match it now. Filter the <a href="/instances">instances</a>, then “Save as collection”.
      </p>
      {list.error && <Notice kind="error">{list.error}</Notice>}
      {!list.data && list.loading && <Loading />}
      {list.data && list.data.length === 0 && (
        <Empty title="No collections yet">{session.can('content.manage') ? 'Filter the instances and save the view as a collection.' : 'An operator or administrator can save one.'}</Empty>
      )}
      {list.data && list.data.length > 0 && (
        <table class="stack" data-testid="collections">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Matches</th>
              <th scope="col">Filter</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((c) => (
              <tr data-collection={c.name}>
                <td data-label="Name">
                  <a href={`/collections/${c.id}`}>{c.name}</a>
                </td>
                <td data-label="Matches" data-testid={`count-${c.id}`}>
                  {plural(c.count, 'instance')}
                </td>
                <td data-label="Filter">{filterWords(c.filter)}</td>
                <td data-label="Description">{c.description || <span class="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** One collection: what it matches now, and for operators its form and Delete. */
export function CollectionPage({ id }: { id: string }) {
  const session = useSession();
  const collection = useLoad(() => api('GET /api/collections/:id', { params: { id } }), [id]);
  const members = useLoad(() => api('GET /api/collections/:id/instances', { params: { id } }), [id]);
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string>();
  if (collection.error) return <Notice kind="error">{collection.error}</Notice>;
  if (!collection.data) return <Loading />;
  const c = collection.data;
  const manage = session.can('content.manage');

  async function remove() {
    try {
      await api('DELETE /api/collections/:id', { params: { id: c.id } });
      navigate('/collections');
    } catch (e) {
      setError(messageOf(e));
      setConfirming(false);
    }
  }

  return (
    <section>
      <p class="crumbs">
        <a href="/collections">Collections</a> / {c.name}
      </p>
      <PageTitle title={c.name}>
        <a class="button" href={`/instances${filterQuery(c.filter)}`}>
          Open in instances
        </a>
        {manage && !editing && (
          <button type="button" onClick={() => setEditing(true)}>
            Edit
          </button>
        )}
        {manage && !confirming && (
          <button type="button" class="danger" onClick={() => setConfirming(true)}>
            Delete
          </button>
        )}
      </PageTitle>
      {error && <Notice kind="error">{error}</Notice>}
      {confirming && (
        <Confirm
          question={<>Delete the collection “{c.name}”? Its instances stay as they are.</>}
          action={`Delete ${c.name}`}
          label="Confirm delete"
          onConfirm={remove}
          onCancel={() => setConfirming(false)}
        />
      )}
      {c.description && <p>{c.description}</p>}
      <p>
        Matches <strong>{filterWords(c.filter)}</strong>: <span data-testid="collection-count">{plural(c.count, 'instance')}</span> now.
      </p>
      {editing && (
        <CollectionForm
          collection={c}
          onSaved={() => {
            setEditing(false);
            collection.reload();
            members.reload();
          }}
          onCancel={() => setEditing(false)}
        />
      )}
      {members.error && <Notice kind="error">{members.error}</Notice>}
      {members.data && members.data.length === 0 && <Empty title="No instance matches this collection now." />}
      {members.data && members.data.length > 0 && (
        <table class="stack" data-testid="collection-instances">
          <thead>
            <tr>
              <th scope="col">VMID</th>
              <th scope="col">Name</th>
              <th scope="col">State</th>
              <th scope="col">Stack</th>
              <th scope="col">Host</th>
              <th scope="col">Tags</th>
            </tr>
          </thead>
          <tbody>
            {members.data.map((i) => (
              <tr data-vmid={i.vmid}>
                <td data-label="VMID">{i.vmid}</td>
                <td data-label="Name">
                  <a href={`/instances/${i.vmid}`}>{i.name}</a>
                </td>
                <td data-label="State">
                  <Badge value={i.state} />
                </td>
                <td data-label="Stack">{i.stack}</td>
                <td data-label="Host">{i.host ? `${i.host.name} · ${i.guest_status ?? ''}` : <span class="muted">—</span>}</td>
                <td data-label="Tags">
                  <TagChips tags={i.tags} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

type Draft = { name: string; description: string; search: string; state: string; stack: string; host_id: string; tags: string; guest_status: string };

function draftOf(c: Collection): Draft {
  const f = c.filter;
  return {
    name: c.name,
    description: c.description,
    search: f.search ?? '',
    state: f.state ?? '',
    stack: f.stack ?? '',
    host_id: f.host_id === undefined ? '' : String(f.host_id),
    tags: (f.tags ?? []).join(', '),
    guest_status: f.guest_status ?? '',
  };
}

/** The filter as the server takes it: empty fields are no filter; a host id typed as digits is sent as a number. */
function filterOf(d: Draft): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  if (d.search.trim()) filter.search = d.search.trim();
  if (d.state) filter.state = d.state;
  if (d.stack) filter.stack = d.stack;
  if (d.host_id.trim()) filter.host_id = /^\d+$/.test(d.host_id.trim()) ? Number(d.host_id.trim()) : d.host_id.trim();
  const tags = parseTagText(d.tags).tags;
  if (tags.length) filter.tags = tags;
  if (d.guest_status.trim()) filter.guest_status = d.guest_status.trim();
  return filter;
}

function CollectionForm({ collection, onSaved, onCancel }: { collection: Collection; onSaved: () => void; onCancel: () => void }) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(collection));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const set = (field: keyof Draft, value: string) => setDraft((d) => ({ ...d, [field]: value }));
  const errorOf = (field: string) => errors[field] ?? Object.entries(errors).find(([f]) => f.startsWith(`${field}.`))?.[1];

  async function submit(event: Event) {
    event.preventDefault();
    setErrors({});
    setError(undefined);
    try {
      const body = { name: draft.name, description: draft.description, filter: filterOf(draft) as CollectionFilter };
      await api('PUT /api/collections/:id', { params: { id: collection.id }, body });
      onSaved();
    } catch (e) {
      if (e instanceof ApiError) setErrors(Object.fromEntries(Object.entries(e.fields).map(([f, m]) => [f.replace(/^filter\./, ''), m])));
      setError(messageOf(e));
    }
  }

  const text = (field: keyof Draft, label: string, hint?: string) => (
    <Field id={`collection-${field}`} label={label} error={errorOf(field)} {...(hint ? { hint } : {})}>
      <input id={`collection-${field}`} value={draft[field]} onInput={(e) => set(field, e.currentTarget.value)} autocomplete="off" />
    </Field>
  );
  const choice = (field: 'state' | 'stack', label: string, options: readonly string[]) => (
    <Field id={`collection-${field}`} label={label} error={errorOf(field)}>
      <select id={`collection-${field}`} value={draft[field]} onChange={(e) => set(field, e.currentTarget.value)}>
        <option value="">any</option>
        {options.map((o) => (
          <option value={o}>{o}</option>
        ))}
      </select>
    </Field>
  );

  return (
    <form class="card form" onSubmit={submit} noValidate data-testid="collection-form">
      {error && <Notice kind="error">{error}</Notice>}
      <div class="form-grid">
        {text('name', 'Name')}
        {text('description', 'Description')}
        {text('tags', 'Tags', 'Every one must be on the instance.')}
        {text('search', 'Search', 'Name, VMID or stack.')}
        {choice('state', 'State', STATES)}
        {choice('stack', 'Stack', STACKS)}
        {text('host_id', 'Host id', 'A host’s id, or none for instances no host reports.')}
        {text('guest_status', 'Guest status', 'running, stopped, …')}
      </div>
      <div class="form-actions">
        <button type="submit" class="primary">
          Save collection
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
