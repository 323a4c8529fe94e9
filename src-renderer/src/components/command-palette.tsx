/**
 * The command palette (Ctrl+K, or Cmd+K on a Mac): a modal dialog with a combobox that filters
 * every action the UI offers (lib/palette-commands.ts) and shows each one's shortcut. Arrow
 * keys move, Enter runs, Escape closes; focus returns to where it was.
 */
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { filterCommands, paletteCommands } from '../lib/palette-commands';
import { useApp, useAppStore } from '../store/store-context';

export function focusRunSearch(): void {
  window.setTimeout(() => document.querySelector<HTMLInputElement>('.timeline-search input[type="search"]')?.focus(), 50);
}

export function CommandPalette() {
  const store = useAppStore();
  const setOpen = useApp((s) => s.setPaletteOpen);
  // Re-read the command list when what it is built from changes.
  const peers = useApp((s) => s.peers);
  const agents = useApp((s) => s.agents);
  const waiting = useApp((s) => s.waiting);
  const runs = useApp((s) => s.runs);
  const route = useApp((s) => s.route);
  const notifications = useApp((s) => s.preferences.notifications);
  const [query, setQuery] = useState('');
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const listRef = useRef<HTMLUListElement>(null);
  const returnFocus = useRef<Element | null>(document.activeElement);

  const all = useMemo(
    () => paletteCommands(store.getState(), focusRunSearch),
    [store, peers, agents, waiting, runs, route, notifications],
  );
  const shown = useMemo(() => filterCommands(all, query), [all, query]);
  const current = Math.min(active, Math.max(0, shown.length - 1));

  useEffect(() => {
    input.current?.focus();
    const previous = returnFocus.current;
    return () => {
      if (previous instanceof HTMLElement && previous.isConnected) previous.focus();
    };
  }, []);
  useEffect(() => {
    listRef.current?.querySelector(`#palette-option-${current}`)?.scrollIntoView({ block: 'nearest' });
  }, [current]);

  const close = () => setOpen(false);
  const run = (index: number) => {
    const command = shown[index];
    if (!command) return;
    close();
    command.run();
  };
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown') setActive((current + 1) % Math.max(1, shown.length));
    else if (event.key === 'ArrowUp') setActive((current - 1 + shown.length) % Math.max(1, shown.length));
    else if (event.key === 'Home' && event.ctrlKey) setActive(0);
    else if (event.key === 'End' && event.ctrlKey) setActive(shown.length - 1);
    else if (event.key === 'Enter') run(current);
    else if (event.key === 'Escape') close();
    else if (event.key === 'Tab') {
      // A modal dialog with one control: focus stays on it.
    } else return;
    event.preventDefault();
  };

  return (
    <div className="palette-backdrop" onMouseDown={close}>
      <div className="palette" role="dialog" aria-modal="true" aria-label="Command palette" onMouseDown={(e) => e.stopPropagation()}>
        <input
          ref={input}
          className="palette-input"
          role="combobox"
          aria-expanded="true"
          aria-controls="palette-list"
          aria-autocomplete="list"
          aria-activedescendant={shown.length > 0 ? `palette-option-${current}` : undefined}
          aria-label="Command"
          placeholder="Type a command: start beta, approve, verify…"
          value={query}
          onChange={(e) => {
            setQuery(e.target.value);
            setActive(0);
          }}
          onKeyDown={onKeyDown}
        />
        <ul id="palette-list" ref={listRef} className="palette-list" role="listbox" aria-label="Commands">
          {shown.map((command, index) => (
            <li
              key={command.id}
              id={`palette-option-${index}`}
              role="option"
              aria-selected={index === current}
              aria-keyshortcuts={command.shortcut}
              className={index === current ? 'palette-option palette-option-active' : 'palette-option'}
              onMouseMove={() => setActive(index)}
              onClick={() => run(index)}
            >
              {/* The option's name is its label; group and shortcut are shown, and the shortcut given as aria-keyshortcuts. */}
              <span className="palette-group" aria-hidden="true">
                {command.group}
              </span>
              <span className="palette-label">{command.label}</span>
              {command.shortcut ? (
                <kbd className="palette-key" aria-hidden="true">
                  {command.shortcut.replace('+', ' ')}
                </kbd>
              ) : null}
            </li>
          ))}
        </ul>
        {shown.length === 0 ? <p className="palette-empty">No command matches “{query}”.</p> : null}
        <p className="palette-help" aria-hidden="true">
          <kbd>↑</kbd> <kbd>↓</kbd> move · <kbd>Enter</kbd> run · <kbd>Esc</kbd> close
        </p>
      </div>
    </div>
  );
}
