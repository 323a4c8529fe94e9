/** The main panel: the selected section's heading and body. */
import { sections } from '../sections/sections';
import { useApp } from '../store/store-context';
import { PeersSection } from '../sections/peers-section';
import { RunsSection } from '../sections/runs-section';
import { ApprovalsSection } from '../sections/approvals-section';
import { SpendSection } from '../sections/spend-section';
import { SessionsSection } from '../sections/sessions-section';
import { EmptyState } from './empty-state';

function AcpSection({ empty }: { empty: string }) {
  return (
    <div className="section-body">
      <EmptyState text={empty} />
      <p className="muted">Not built yet: this version does not observe editor sessions, so nothing will appear here until it does.</p>
    </div>
  );
}

export function SectionView() {
  const sectionId = useApp((s) => s.section);
  const section = sections.find((s) => s.id === sectionId) ?? sections[0];
  return (
    <main className="content" id="content" aria-labelledby="section-heading">
      {/* Focus stays where the person put it (the sidebar's roving tab stop); "Skip to content" reaches this. */}
      <h1 id="section-heading" tabIndex={-1}>
        {section.label}
      </h1>
      {section.id === 'peers' ? (
        <PeersSection empty={section.empty} />
      ) : section.id === 'runs' ? (
        <RunsSection empty={section.empty} />
      ) : section.id === 'approvals' ? (
        <ApprovalsSection empty={section.empty} />
      ) : section.id === 'spend' ? (
        <SpendSection empty={section.empty} />
      ) : section.id === 'sessions' ? (
        <SessionsSection empty={section.empty} />
      ) : (
        <AcpSection empty={section.empty} />
      )}
    </main>
  );
}
