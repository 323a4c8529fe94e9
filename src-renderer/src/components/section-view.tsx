/** The main panel for the selected section; each section shows its empty state until its feature lands. */
import { useEffect, useRef } from 'react';
import { sections } from '../sections/sections';
import { useApp } from '../store/store-context';
import { PeersSection } from '../sections/peers-section';
import { EmptyState } from './empty-state';

export function SectionView() {
  const sectionId = useApp((s) => s.section);
  const section = sections.find((s) => s.id === sectionId) ?? sections[0];
  const heading = useRef<HTMLHeadingElement>(null);
  const first = useRef(true);

  // Moving to a section moves focus to its heading (except on first paint), so keyboard and
  // screen-reader users land where the content changed.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    heading.current?.focus();
  }, [sectionId]);

  return (
    <main className="content" id="content" aria-labelledby="section-heading">
      <h1 id="section-heading" tabIndex={-1} ref={heading}>
        {section.label}
      </h1>
      {section.id === 'peers' ? <PeersSection empty={section.empty} /> : <EmptyState text={section.empty} />}
    </main>
  );
}

