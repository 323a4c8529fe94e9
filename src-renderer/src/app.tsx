/** The shell: sidebar, the selected section, the status bar, and the global section shortcuts. */
import { useEffect } from 'react';
import { Sidebar } from './components/sidebar';
import { SectionView } from './components/section-view';
import { StatusBar } from './components/status-bar';
import { sections } from './sections/sections';
import { useApp } from './store/store-context';

export function App() {
  const start = useApp((s) => s.start);
  const setSection = useApp((s) => s.setSection);

  useEffect(() => start(), [start]);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!event.altKey || event.ctrlKey || event.metaKey) return;
      const index = Number(event.key) - 1;
      const section = sections[index];
      if (!section) return;
      event.preventDefault();
      setSection(section.id);
      // Every section's button is always rendered, so focus can move before React re-renders.
      document.getElementById(`nav-${section.id}`)?.focus();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [setSection]);

  return (
    <div className="shell">
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      <Sidebar />
      <SectionView />
      <StatusBar />
    </div>
  );
}
