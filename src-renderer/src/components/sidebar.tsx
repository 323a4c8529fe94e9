/**
 * Section navigation. A list of buttons with a roving tab stop: Tab enters the list once,
 * arrow keys (and Home/End) move between sections and open them, and Alt+1…9 jump from
 * anywhere (see app.tsx). The current section is marked with aria-current. Approvals shows how
 * many runs wait; the count is a description, so the button's name stays the section's.
 * Hovering or focusing a section prefetches its view (each view is its own chunk).
 */
import { useRef, type KeyboardEvent } from 'react';
import { prefetchSection } from '../sections/section-chunks';
import { sections, type SectionId } from '../sections/sections';
import { useApp } from '../store/store-context';

export function Sidebar() {
  const current = useApp((s) => s.section);
  const setSection = useApp((s) => s.setSection);
  const waiting = useApp((s) => s.waiting.length);
  const buttons = useRef<Array<HTMLButtonElement | null>>([]);

  const move = (index: number) => {
    const count = sections.length;
    const next = ((index % count) + count) % count;
    const section = sections[next];
    if (!section) return;
    setSection(section.id);
    buttons.current[next]?.focus();
  };

  const onKeyDown = (event: KeyboardEvent<HTMLButtonElement>, index: number) => {
    const keys: Record<string, number> = { ArrowDown: index + 1, ArrowUp: index - 1, Home: 0, End: sections.length - 1 };
    const target = keys[event.key];
    if (target === undefined) return;
    event.preventDefault();
    move(target);
  };

  return (
    <nav className="sidebar" aria-label="Sections">
      <div className="brand" aria-hidden="true">
        AgentPlane
      </div>
      <ul>
        {sections.map((section, index) => (
          <li key={section.id}>
            <button
              ref={(el) => {
                buttons.current[index] = el;
              }}
              type="button"
              id={`nav-${section.id}`}
              className="nav-item"
              aria-current={current === section.id ? 'page' : undefined}
              aria-keyshortcuts={`Alt+${index + 1}`}
              tabIndex={current === section.id ? 0 : -1}
              onClick={() => setSection(section.id as SectionId)}
              // A pointer resting on a section (or focus reaching it) starts fetching its view's chunk.
              onPointerEnter={() => prefetchSection(section.id)}
              onFocus={() => prefetchSection(section.id)}
              onKeyDown={(event) => onKeyDown(event, index)}
              aria-describedby={section.id === 'approvals' && waiting > 0 ? 'approvals-count' : undefined}
            >
              <span>{section.label}</span>
              {section.id === 'approvals' && waiting > 0 ? (
                <span className="nav-count" aria-hidden="true">
                  {waiting}
                </span>
              ) : null}
              <kbd aria-hidden="true">Alt {index + 1}</kbd>
            </button>
          </li>
        ))}
      </ul>
      <span id="approvals-count" className="visually-hidden">
        {waiting} waiting
      </span>
      <p className="sidebar-hint">
        <kbd>{/Mac|iPhone|iPad/.test(navigator.platform) ? '⌘' : 'Ctrl'}</kbd> <kbd>K</kbd> commands
      </p>
    </nav>
  );
}
