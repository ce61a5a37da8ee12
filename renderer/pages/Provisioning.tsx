import { useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api';
import { Field, FormActions, Notice, Time, useLoad } from '../components/ui';
import type { CloudConfigSummary, ServerKey } from '../../server/contract/provisioning';

type Outcome = { kind: 'success' | 'error'; text: string };

/** Settings → Server keys (administrators): SSH public keys that deploy puts on new guests. */
export function ServerKeySettings() {
  // The list answers id, name, type and fingerprint; each key's comment and who added it come from its own read.
  const keys = useLoad(async () => {
    const list = await api('GET /api/server-keys');
    return Promise.all(list.map((k) => api('GET /api/server-keys/:id', { params: { id: k.id } })));
  }, []);
  const [name, setName] = useState('');
  const [publicKey, setPublicKey] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [outcome, setOutcome] = useState<Outcome>();
  const [busy, setBusy] = useState(false);

  async function add(event: Event) {
    event.preventDefault();
    setBusy(true);
    setErrors({});
    setOutcome(undefined);
    try {
      const key = await api('POST /api/server-keys', { body: { name, public_key: publicKey } });
      setOutcome({ kind: 'success', text: `Server key “${key.name}” saved: ${key.fingerprint}.` });
      setName('');
      setPublicKey('');
      keys.reload();
    } catch (e) {
      if (e instanceof ApiError && e.status === 400 && Object.keys(e.fields).length === 0) {
        // A private key pasted by mistake: said beside the box, and the box is emptied so it is not left on screen.
        setErrors({ public_key: e.message });
        setPublicKey('');
      } else if (e instanceof ApiError && Object.keys(e.fields).length) {
        setErrors(e.fields);
      } else {
        setOutcome({ kind: 'error', text: messageOf(e) });
      }
    } finally {
      setBusy(false);
    }
  }

  async function remove(key: ServerKey) {
    if (!confirm(`Delete the server key “${key.name}” (${key.fingerprint})? Deploys and rebuilds that name it will be refused.`)) return;
    setOutcome(undefined);
    try {
      await api('DELETE /api/server-keys/:id', { params: { id: key.id } });
      setOutcome({ kind: 'success', text: `Server key “${key.name}” deleted.` });
    } catch (e) {
      setOutcome({ kind: 'error', text: messageOf(e) });
    }
    keys.reload();
  }

  return (
    <div class="card span-all" data-testid="server-keys">
      <h2>Server keys</h2>
      <p>SSH public keys that operators can put on the guests they deploy. Only the public key is kept; it is never shown again.</p>
      {outcome && <Notice kind={outcome.kind}>{outcome.text}</Notice>}
      {keys.error && <Notice kind="error">{keys.error}</Notice>}
      {keys.data && keys.data.length === 0 && <p class="muted">No server key yet.</p>}
      {keys.data && keys.data.length > 0 && (
        <div class="table-wrap">
          <table class="stack server-keys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Fingerprint</th>
                <th scope="col">Comment</th>
                <th scope="col">Added</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {keys.data.map((k) => (
                <tr key={k.id} data-key={k.name}>
                  <td data-label="Name">{k.name}</td>
                  <td data-label="Type">
                    {k.type} ({k.bits} bits)
                  </td>
                  <td data-label="Fingerprint">
                    <code class="fingerprint" data-testid="fingerprint">{k.fingerprint}</code>
                  </td>
                  <td data-label="Comment">{k.comment || '—'}</td>
                  <td data-label="Added">
                    {k.created_by}, <Time iso={k.created_at} />
                  </td>
                  <td class="actions">
                    <button type="button" class="danger" onClick={() => void remove(k)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form onSubmit={add} noValidate>
        <h3>Add a server key</h3>
        <Field id="server-key-name" label="Name" error={errors.name}>
          <input id="server-key-name" value={name} maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field id="server-key-public" label="Public key (the line of the .pub file)" error={errors.public_key} hint="ssh-ed25519, ecdsa, ssh-rsa (2048 bits or more) or a security key (sk-…)">
          <textarea
            id="server-key-public"
            rows={3}
            spellcheck={false}
            autocomplete="off"
            placeholder="ssh-ed25519 AAAA… you@laptop"
            value={publicKey}
            aria-invalid={errors.public_key ? true : undefined}
            aria-describedby={errors.public_key ? 'server-key-public-error' : 'server-key-public-hint'}
            onInput={(e) => setPublicKey(e.currentTarget.value)}
          />
        </Field>
        <div class="form-actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Saving…' : 'Add server key'}
          </button>
        </div>
      </form>
    </div>
  );
}

const NEW_BODY = '#cloud-config\n';

/** The create and edit form of a cloud config; editing loads the body first. */
function CloudConfigForm({ editing, done, cancel }: { editing?: { id: number; name: string; description: string; body: string }; done: (name: string) => void; cancel?: () => void }) {
  const [name, setName] = useState(editing?.name ?? '');
  const [description, setDescription] = useState(editing?.description ?? '');
  const [body, setBody] = useState(editing?.body ?? NEW_BODY);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const prefix = editing ? `cloud-config-${editing.id}` : 'cloud-config-new';

  async function save(event: Event) {
    event.preventDefault();
    setErrors({});
    setError(undefined);
    try {
      const input = { body: { name, description, body } };
      const saved = editing ? await api('PUT /api/cloud-configs/:id', { params: { id: editing.id }, ...input }) : await api('POST /api/cloud-configs', input);
      if (!editing) {
        setName('');
        setDescription('');
        setBody(NEW_BODY);
      }
      done(saved.name);
    } catch (e) {
      if (e instanceof ApiError && Object.keys(e.fields).length) setErrors(e.fields);
      else setError(messageOf(e));
    }
  }

  return (
    <form onSubmit={save} noValidate data-testid={prefix}>
      <h3>{editing ? `Edit “${editing.name}”` : 'Add a cloud config'}</h3>
      {error && <Notice kind="error">{error}</Notice>}
      <Field id={`${prefix}-name`} label="Name" error={errors.name}>
        <input id={`${prefix}-name`} value={name} maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Field id={`${prefix}-description`} label="Description" error={errors.description}>
        <input id={`${prefix}-description`} value={description} maxLength={500} onInput={(e) => setDescription(e.currentTarget.value)} />
      </Field>
      <Field id={`${prefix}-body`} label="cloud-init user-data" error={errors.body} hint="Starts with #cloud-config; at most 64 KiB. SSH keys are chosen at deploy from the server keys, not written here.">
        <textarea id={`${prefix}-body`} rows={12} spellcheck={false} class="code" value={body} onInput={(e) => setBody(e.currentTarget.value)} />
      </Field>
      <FormActions submit={editing ? 'Save cloud config' : 'Add cloud config'} cancel={cancel} />
    </form>
  );
}

/** Settings → Cloud configs (operators and administrators): cloud-init user-data that deploy can give a new guest. */
export function CloudConfigSettings() {
  const configs = useLoad(() => api('GET /api/cloud-configs'), []);
  const [editing, setEditing] = useState<{ id: number; name: string; description: string; body: string }>();
  const [outcome, setOutcome] = useState<Outcome>();

  async function edit(c: CloudConfigSummary) {
    setOutcome(undefined);
    if (editing?.id === c.id) return setEditing(undefined);
    try {
      setEditing(await api('GET /api/cloud-configs/:id', { params: { id: c.id } }));
    } catch (e) {
      setOutcome({ kind: 'error', text: messageOf(e) });
    }
  }
  async function remove(c: CloudConfigSummary) {
    if (!confirm(`Delete the cloud config “${c.name}”? Deploys and rebuilds that name it will be refused.`)) return;
    setOutcome(undefined);
    try {
      await api('DELETE /api/cloud-configs/:id', { params: { id: c.id } });
      if (editing?.id === c.id) setEditing(undefined);
      setOutcome({ kind: 'success', text: `Cloud config “${c.name}” deleted.` });
    } catch (e) {
      setOutcome({ kind: 'error', text: messageOf(e) });
    }
    configs.reload();
  }
  const saved = (verb: string) => (name: string) => {
    setOutcome({ kind: 'success', text: `Cloud config “${name}” ${verb}.` });
    setEditing(undefined);
    configs.reload();
  };

  return (
    <div class="card span-all" data-testid="cloud-configs">
      <h2>Cloud configs</h2>
      {outcome && <Notice kind={outcome.kind}>{outcome.text}</Notice>}
      {configs.error && <Notice kind="error">{configs.error}</Notice>}
      {configs.data && configs.data.length === 0 && <p class="muted">No cloud config yet.</p>}
      {configs.data && configs.data.length > 0 && (
        <div class="table-wrap">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col">Size</th>
                <th scope="col">Changed</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {configs.data.map((c) => (
                <tr key={c.id} data-config={c.name}>
                  <td data-label="Name">{c.name}</td>
                  <td data-label="Description">{c.description || '—'}</td>
                  <td data-label="Size">{c.size.toLocaleString('en')} bytes</td>
                  <td data-label="Changed">
                    {c.updated_by}, <Time iso={c.updated_at} />
                  </td>
                  <td class="actions">
                    <button type="button" aria-expanded={editing?.id === c.id} onClick={() => void edit(c)}>
                      Edit
                    </button>
                    <button type="button" class="danger" onClick={() => void remove(c)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing && <CloudConfigForm key={editing.id} editing={editing} cancel={() => setEditing(undefined)} done={saved('saved')} />}
      <CloudConfigForm done={saved('added')} />
    </div>
  );
}
