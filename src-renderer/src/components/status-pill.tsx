/** A state in words with a coloured dot: the word carries the meaning, the colour only helps. */
export type Tone = 'ok' | 'bad' | 'warn' | 'info' | 'plain' | 'busy';

export function StatusPill({ tone, children, title }: { tone: Tone; children: React.ReactNode; title?: string }) {
  return (
    <span className={`pill pill-${tone}`} title={title}>
      <span className="pill-dot" aria-hidden="true" />
      {children}
    </span>
  );
}
