import { useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api';
import { Dialog } from '../components/Dialog';
import { Field, Notice } from '../components/ui';
import { navigate } from '../router';
import { filterWords, parseTagText } from '../query';
import { FLAGS, STACKS, STATES } from '../../server/contract/registry';
import type { CollectionFilter } from '../../server/contract/collections';
import type { BulkEdit } from '../../server/contract/inputs/registry';

/** The 400's field errors as a list: each names the field, and a bulk edit's message names the vmid ("vmid 203: …"). */
function FieldErrors({ fields }: { fields: Record<string, string> }) {
  const entries = Object.entries(fields);
  if (!entries.length) return null;
  return (
    <ul class="field-errors" data-testid="field-errors">
      {entries.map(([field, message]) => (
        <li>
          <strong>{field}</strong>: {message}
        </li>
      ))}
    </ul>
  );
}

/**
 * The same change to every selected instance, all or nothing: the server refuses the whole edit when
 * one instance cannot take it, and says which and why.
 */
export function BulkEditDialog({ vmids, onDone, onClose }: { vmids: number[]; onDone: (updated: number) => void; onClose: () => void }) {
  const [set, setSet] = useState<Record<string, string>>({});
  const [add, setAdd] = useState('');
  const [remove, setRemove] = useState('');
  const [error, setError] = useState<string>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const choose = (field: string, value: string) => setSet((s) => ({ ...s, [field]: value }));

  async function submit(event: Event) {
    event.preventDefault();
    const added = parseTagText(add);
    const removed = parseTagText(remove);
    const bad = [...added.invalid, ...removed.invalid];
    if (bad.length) {
      setError(`Not a tag: ${bad.join(', ')}. A tag is a letter or digit, then letters, digits, _ . - (at most 32).`);
      return;
    }
    const body: BulkEdit = { vmids };
    const changes: Record<string, string | number> = {};
    for (const [field, value] of Object.entries(set)) if (value !== '') changes[field] = (FLAGS as readonly string[]).includes(field) ? Number(value) : value;
    if (Object.keys(changes).length) body.set = changes as BulkEdit['set'];
    if (added.tags.length) body.add_tags = added.tags;
    if (removed.tags.length) body.remove_tags = removed.tags;
    setBusy(true);
    setError(undefined);
    setFields({});
    try {
      const { updated } = await api('POST /api/instances/bulk', { body });
      onDone(updated);
    } catch (e) {
      setError(e instanceof ApiError && Object.keys(e.fields).length ? 'Nothing was changed: the edit cannot be made to every instance.' : messageOf(e));
      if (e instanceof ApiError) setFields(e.fields);
      setBusy(false);
    }
  }

  const keep = (field: string, options: readonly string[], labels?: Record<string, string>) => (
    <select id={`bulk-${field}`} value={set[field] ?? ''} onChange={(e) => choose(field, e.currentTarget.value)}>
      <option value="">— keep —</option>
      {options.map((o) => (
        <option value={o}>{labels?.[o] ?? o}</option>
      ))}
    </select>
  );

  return (
    <Dialog id="bulk-edit" title={`Edit ${vmids.length} instance${vmids.length === 1 ? '' : 's'}`} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        {error && <Notice kind="error">{error}</Notice>}
        <FieldErrors fields={fields} />
        <div class="form-grid">
          <Field id="bulk-state" label="State">
            {keep('state', STATES)}
          </Field>
          <Field id="bulk-stack" label="Stack">
            {keep('stack', STACKS)}
          </Field>
          {FLAGS.map((flag) => (
            <Field id={`bulk-${flag}`} label={flag.replace('_', ' ')}>
              {keep(flag, ['1', '0'], { '1': 'on', '0': 'off' })}
            </Field>
          ))}
          <Field id="bulk-add-tags" label="Add tags" hint="Separated by commas or spaces.">
            <input id="bulk-add-tags" value={add} onInput={(e) => setAdd(e.currentTarget.value)} autocomplete="off" />
          </Field>
          <Field id="bulk-remove-tags" label="Remove tags">
            <input id="bulk-remove-tags" value={remove} onInput={(e) => setRemove(e.currentTarget.value)} autocomplete="off" />
          </Field>
        </div>
        <div class="form-actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Applying…' : `Apply to ${vmids.length}`}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** "Save as collection": the instances view's filters, kept under a name. */
export function SaveCollectionDialog({ filter, onClose }: { filter: CollectionFilter; onClose: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<string>();
  const [fields, setFields] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setFields({});
    try {
      const saved = await api('POST /api/collections', { body: { name, description, filter } });
      navigate(`/collections/${saved.id}`);
    } catch (e) {
      setError(messageOf(e));
      if (e instanceof ApiError) setFields(e.fields);
      setBusy(false);
    }
  }

  return (
    <Dialog id="save-collection" title="Save as collection" onClose={onClose}>
      <form onSubmit={submit} noValidate>
        {error && <Notice kind="error">{error}</Notice>}
        <p>
          Matches <strong>{filterWords(filter)}</strong>, now and as instances change.
        </p>
        <Field id="collection-name" label="Name" error={fields.name}>
          <input id="collection-name" value={name} onInput={(e) => setName(e.currentTarget.value)} autocomplete="off" required />
        </Field>
        <Field id="collection-description" label="Description" error={fields.description}>
          <input id="collection-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} autocomplete="off" />
        </Field>
        <div class="form-actions">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Saving…' : 'Save collection'}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
