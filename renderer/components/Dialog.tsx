import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * A modal dialog (`<dialog>` with showModal): sized to the window, so its fields stay in view however
 * wide the table it was opened from is. Escape or Close ends it, and focus goes back to what opened it.
 */
export function Dialog(props: { id: string; title: string; onClose: () => void; wide?: boolean; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  const onClose = useRef(props.onClose);
  onClose.current = props.onClose;
  useEffect(() => {
    const dialog = ref.current!;
    const opener = document.activeElement as HTMLElement | null;
    dialog.showModal();
    // Escape: the browser closes the dialog; the page then forgets it.
    const closed = () => onClose.current();
    dialog.addEventListener('close', closed);
    return () => {
      dialog.removeEventListener('close', closed);
      if (dialog.open) dialog.close();
      opener?.focus?.();
    };
  }, []);
  return (
    <dialog ref={ref} class={props.wide ? 'modal wide' : 'modal'} aria-labelledby={`${props.id}-title`} data-testid={props.id}>
      <div class="modal-head">
        <h2 id={`${props.id}-title`}>{props.title}</h2>
        <button type="button" class="modal-close" aria-label="Close" onClick={() => onClose.current()}>
          ×
        </button>
      </div>
      {props.children}
    </dialog>
  );
}
