import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

export interface MenuItem {
  label: string;
  onSelect: () => void;
  disabled?: boolean;
  danger?: boolean;
}

/**
 * A menu button (the WAI-ARIA menu button pattern): Enter, Space or the arrows open it, the arrows,
 * Home and End move between items, Escape or Tab closes it and focus goes back to the button. The
 * list is placed in the viewport (fixed, beside the button), so a table that scrolls sideways does not
 * clip it. `note` says why items are disabled.
 */
export function MenuButton(props: { id: string; label: string; name: string; items: MenuItem[]; note?: string | undefined }) {
  const [open, setOpen] = useState(false);
  const [place, setPlace] = useState<{ top: number; left: number }>();
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const focusAt = useRef(0);
  const items = () => [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? [])];

  const close = (refocus: boolean) => {
    setOpen(false);
    setPlace(undefined);
    if (refocus) button.current?.focus();
  };
  const show = (at: 'first' | 'last') => {
    focusAt.current = at === 'first' ? 0 : -1;
    setOpen(true);
  };

  // Under the button, right edges aligned, kept inside the window (above the button when there is no room below).
  const position = () => {
    if (!menu.current || !button.current) return;
    const b = button.current.getBoundingClientRect();
    const m = menu.current.getBoundingClientRect();
    const margin = 8;
    const left = Math.max(margin, Math.min(b.right - m.width, innerWidth - m.width - margin));
    const below = b.bottom + 4;
    const top = below + m.height <= innerHeight - margin ? below : Math.max(margin, b.top - m.height - 4);
    setPlace((was) => (was?.top === top && was.left === left ? was : { top, left }));
  };
  // Placed once its size is known.
  useLayoutEffect(() => {
    if (open) position();
  }, [open]);
  // Focus moves in once the list is placed (a hidden element cannot take it).
  useEffect(() => {
    if (place) items().at(focusAt.current)?.focus({ preventScroll: true });
  }, [place]);

  useEffect(() => {
    if (!open) return;
    const outside = (e: Event) => {
      const target = e.target as Node;
      if (!menu.current?.contains(target) && !button.current?.contains(target)) close(false);
    };
    // The list is fixed beside the button: it follows when the page scrolls.
    const moved = (e: Event) => {
      if (!menu.current?.contains(e.target as Node)) position();
    };
    const escape = (e: KeyboardEvent) => {
      if (e.key === 'Escape') close(true);
    };
    document.addEventListener('keydown', escape);
    document.addEventListener('pointerdown', outside);
    addEventListener('scroll', moved, true);
    addEventListener('resize', moved);
    return () => {
      document.removeEventListener('keydown', escape);
      document.removeEventListener('pointerdown', outside);
      removeEventListener('scroll', moved, true);
      removeEventListener('resize', moved);
    };
  }, [open]);

  function onMenuKey(e: KeyboardEvent) {
    const list = items();
    const at = list.indexOf(document.activeElement as HTMLElement);
    const go = (i: number) => list[(i + list.length) % list.length]?.focus();
    if (e.key === 'ArrowDown') go(at + 1);
    else if (e.key === 'ArrowUp') go(at - 1);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(list.length - 1);
    else if (e.key === 'Tab') return close(true);
    else return;
    e.preventDefault();
  }

  return (
    <>
      <button
        type="button"
        ref={button}
        class="menu-button"
        id={`${props.id}-button`}
        aria-label={props.name}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={props.id}
        onClick={() => (open ? close(false) : show('first'))}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
            e.preventDefault();
            show(e.key === 'ArrowDown' ? 'first' : 'last');
          }
        }}
      >
        {props.label}
      </button>
      {open && (
        <div
          ref={menu}
          id={props.id}
          class="menu"
          role="menu"
          aria-labelledby={`${props.id}-button`}
          aria-describedby={props.note ? `${props.id}-note` : undefined}
          style={place ? { top: `${place.top}px`, left: `${place.left}px` } : { visibility: 'hidden', top: '0', left: '0' }}
          onKeyDown={onMenuKey}
        >
          {props.note && (
            <p class="menu-note" id={`${props.id}-note`}>
              {props.note}
            </p>
          )}
          {props.items.map((item) => (
            <button
              type="button"
              key={item.label}
              role="menuitem"
              tabIndex={-1}
              class={item.danger ? 'danger-text' : undefined}
              aria-disabled={item.disabled ? 'true' : undefined}
              onClick={() => {
                if (item.disabled) return;
                close(true);
                item.onSelect();
              }}
            >
              {item.label}
            </button>
          ))}
        </div>
      )}
    </>
  );
}
