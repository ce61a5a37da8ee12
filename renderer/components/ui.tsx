import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from '../api';
import { exactTime, relativeTime } from '../format';

/**
 * Loads data for a page; `reload` fetches again. Errors become a message, never a stack trace.
 * A live event applied with `update` while a read is on its way may be missing from that read's
 * answer (read before the change, delivered after the event): the page then reads once more.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const reading = useRef(false);
  const stale = useRef(false);
  useEffect(() => {
    let live = true;
    reading.current = true;
    stale.current = false;
    setState((s) => ({ ...s, loading: true }));
    const landed = () => {
      reading.current = false;
      if (stale.current) setTick((t) => t + 1);
    };
    load().then(
      (data) => {
        if (!live) return;
        landed();
        setState({ data, loading: false });
      },
      (error) => {
        if (!live) return;
        landed();
        setState({ error: messageOf(error), loading: false });
      },
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  /** Changes the loaded data in place (a live event), without a request. */
  const update = useCallback((fn: (data: T) => T) => {
    if (reading.current) stale.current = true;
    setState((s) => (s.data === undefined ? s : { ...s, data: fn(s.data) }));
  }, []);
  return { ...state, reload, update };
}

/** A relative time with the exact UTC time beside it (and in the tooltip). */
export function Time({ iso, exact = true }: { iso: string | null | undefined; exact?: boolean }) {
  if (!iso) return <span class="muted">never</span>;
  return (
    <span class="time">
      <time datetime={iso} title={exactTime(iso)}>
        {relativeTime(iso)}
      </time>
      {exact && <span class="exact"> · {exactTime(iso)}</span>}
    </span>
  );
}

export function Notice({ kind, children }: { kind: 'error' | 'success' | 'info' | 'warning'; children: ComponentChildren }) {
  return (
    <div class={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

export function Loading() {
  return (
    <p class="muted" aria-live="polite">
      Loading…
    </p>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children && <p>{children}</p>}
    </div>
  );
}

/** A form's submit button, and Cancel when it edits something that can be left as it was. */
export function FormActions({ submit, cancel }: { submit: string; cancel?: (() => void) | undefined }) {
  return (
    <div class="form-actions">
      <button type="submit" class="primary">
        {submit}
      </button>
      {cancel && (
        <button type="button" onClick={cancel}>
          Cancel
        </button>
      )}
    </div>
  );
}

/** A labelled form field with the server's message for it shown beside it. */
export function Field(props: { id: string; label: string; error?: string | undefined; hint?: string; children: ComponentChildren }) {
  return (
    <div class={`field${props.error ? ' field-invalid' : ''}`}>
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint && !props.error && (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p class="field-error" id={`${props.id}-error`}>
          {props.error}
        </p>
      )}
    </div>
  );
}

export function Badge({ value }: { value: string }) {
  return <span class={`badge badge-${value.replace(/[^a-z]/g, '')}`}>{value}</span>;
}

export function PageTitle({ title, children }: { title: string; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · homefleet`;
  }, [title]);
  return (
    <div class="page-head">
      <h1>{title}</h1>
      {children && <div class="actions">{children}</div>}
    </div>
  );
}

/** Time since `since`, ticking every second: a run in progress. */
export function Elapsed({ since }: { since: string }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, []);
  const seconds = Math.max(0, Math.floor((now - Date.parse(since)) / 1000));
  const text = seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return (
    <span class="elapsed" data-testid="elapsed">
      {text}
    </span>
  );
}

/** Copies a secret or a command shown once; without clipboard access it says to select the text instead. */
export function CopyButton({ text, label = 'Copy', primary = false }: { text: string; label?: string; primary?: boolean }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  }
  return (
    <button type="button" class={primary ? 'primary copy' : 'copy'} onClick={copy} aria-live="polite">
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text' : label}
    </button>
  );
}

/**
 * "Are you sure?" in place, naming what is about to happen: `question` says it, the first button
 * does it (its label names the target), Cancel puts the row back as it was.
 */
export function Confirm(props: { question: ComponentChildren; action: string; label: string; onConfirm: () => void; onCancel: () => void; danger?: boolean }) {
  return (
    <div class="confirm" role="group" aria-label={props.label}>
      <span>{props.question}</span>
      <button type="button" class={props.danger === false ? 'primary' : 'danger'} onClick={props.onConfirm}>
        {props.action}
      </button>
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}
