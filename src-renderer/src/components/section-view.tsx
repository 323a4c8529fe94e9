/** The main panel: the selected section's heading and body. */
import { sections } from '../sections/sections';
import { useApp } from '../store/store-context';
import { PeersSection } from '../sections/peers-section';
import { RunsSection } from '../sections/runs-section';
import { ApprovalsSection } from '../sections/approvals-section';
import { SpendSection } from '../sections/spend-section';
import { SessionsSection } from '../sections/sessions-section';
import { AcpSection } from '../sections/acp-section';
import { McpSection } from '../sections/mcp-section';
import { SettingsSection } from '../sections/settings-section';
import { RemoteAgentsSection } from '../sections/remote-agents-section';

/**
 * While the plane cannot be reached, what is on screen is the last state heard, not the
 * present: a banner says so, the view is marked stale, and every control in it is disabled (a
 * disabled fieldset), so nobody approves or stops something on the strength of old data. The
 * text stays readable and selectable. The client keeps reconnecting and, once back, catches
 * up from the journal seq it last saw; the view then lives again.
 */
function LostPlaneBanner() {
  return (
    <div className="lost-plane" role="alert">
      <strong>The plane is not answering.</strong> What you see is how things stood when it was last heard from; actions are disabled until it is back. If it was restarted on the same data dir,
      this page reconnects by itself.
    </div>
  );
}

export function SectionView() {
  const sectionId = useApp((s) => s.section);
  const connection = useApp((s) => s.connection);
  const section = sections.find((s) => s.id === sectionId) ?? sections[0];
  // 'connecting' is the first connection of this page, with nothing yet to call stale.
  const lost = connection === 'reconnecting' || connection === 'closed';
  return (
    <main className="content" id="content" aria-labelledby="section-heading">
      {/* Focus stays where the person put it (the sidebar's roving tab stop); "Skip to content" reaches this. */}
      <h1 id="section-heading" tabIndex={-1}>
        {section.label}
      </h1>
      {lost ? <LostPlaneBanner /> : null}
      <fieldset className={`section-frame${lost ? ' stale' : ''}`} disabled={lost} aria-label={lost ? `${section.label} (out of date)` : section.label}>
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
      ) : section.id === 'acp' ? (
        <AcpSection empty={section.empty} />
      ) : section.id === 'settings' ? (
        <SettingsSection empty={section.empty} />
      ) : section.id === 'remotes' ? (
        <RemoteAgentsSection empty={section.empty} />
      ) : (
        <McpSection empty={section.empty} />
      )}
      </fieldset>
    </main>
  );
}
