/** The main panel for the selected section; each section shows its empty state until its feature lands. */
import { sections } from '../sections/sections';
import { useApp } from '../store/store-context';
import { PeersSection } from '../sections/peers-section';
import { EmptyState } from './empty-state';

export function SectionView() {
  const sectionId = useApp((s) => s.section);
  const section = sections.find((s) => s.id === sectionId) ?? sections[0];
  return (
    <main className="content" id="content" aria-labelledby="section-heading">
      {/* Focus stays where the person put it (the sidebar's roving tab stop); "Skip to content" reaches this. */}
      <h1 id="section-heading" tabIndex={-1}>
        {section.label}
      </h1>
      {section.id === 'peers' ? <PeersSection empty={section.empty} /> : <EmptyState text={section.empty} />}
    </main>
  );
}

