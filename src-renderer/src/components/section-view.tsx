/** The main panel: the selected section's heading and body. */
import { Component, Suspense, useEffect, useRef, type ReactNode } from 'react';
import { prefetchOthersWhenIdle, sectionView } from '../sections/section-chunks';
import { sections } from '../sections/sections';
import { useApp } from '../store/store-context';

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

/** While a view's chunk is on its way: said once to a screen reader, a spinner for the eye. */
function SectionLoading({ label }: { label: string }) {
  return (
    <p className="section-loading" role="status">
      <span className="spinner" aria-hidden="true" /> Loading {label}…
    </p>
  );
}

/**
 * A view whose chunk could not be fetched (the plane was upgraded under an open page, so the
 * old chunk names are gone; a file missing from a broken install) says so, instead of leaving
 * the panel blank. Keyed by section, so moving to another view and back tries again.
 */
class SectionChunkBoundary extends Component<{ label: string; children: ReactNode }, { error: string | null }> {
  override state: { error: string | null } = { error: null };

  static getDerivedStateFromError(error: unknown) {
    return { error: error instanceof Error ? error.message : String(error) };
  }

  override render() {
    if (this.state.error === null) return this.props.children;
    return (
      <div className="empty-state" role="alert">
        <p>
          The {this.props.label} view could not be loaded ({this.state.error}). Reloading the page fetches it again.
        </p>
        <button type="button" className="button" onClick={() => window.location.reload()}>
          Reload
        </button>
      </div>
    );
  }
}

export function SectionView() {
  const sectionId = useApp((s) => s.section);
  const connection = useApp((s) => s.connection);
  const section = sections.find((s) => s.id === sectionId) ?? sections[0];
  const View = sectionView(section.id);
  // The other views are fetched once the first one is here and the browser is idle.
  const firstSection = useRef(section.id).current;
  useEffect(() => prefetchOthersWhenIdle(firstSection, sections.map((s) => s.id)), [firstSection]);
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
        <SectionChunkBoundary key={section.id} label={section.label}>
          <Suspense fallback={<SectionLoading label={section.label} />}>
            <View empty={section.empty} />
          </Suspense>
        </SectionChunkBoundary>
      </fieldset>
    </main>
  );
}
