/**
 * The open run's model answers while they stream, under its timeline. Labelled for what they
 * are: live, untrusted model output, not yet journaled (docs/GOVERNED-RUNTIME.md: live deltas are
 * projections, not replay truth). Each disappears when its step's sealed effect reaches the timeline, whose
 * record is then the answer. The region is always in the page (empty when nothing streams), so
 * a screen reader announces the text politely as it arrives rather than missing the first of it.
 */
import { count } from '../lib/display-format';
import { liveAnswersInOrder, liveEffectName } from '../lib/live-answer';
import { StatusPill } from '../components/status-pill';
import { useApp } from '../store/store-context';

function LiveAnswerItem({ step, text, omittedChars, done }: { step: number; text: string; omittedChars: number; done: boolean }) {
  const effect = useApp((s) => liveEffectName(s.timeline.pages, step));
  return (
    <figure className="live-answer-item">
      <figcaption>
        <StatusPill tone="busy">{done ? 'answered' : 'streaming'} — not yet journaled</StatusPill>{' '}
        <span className="muted">
          step {step}
          {effect ? ` · ${effect}` : ''} · untrusted model output
          {omittedChars > 0 ? ` · last ${count(text.length)} characters shown` : ''}
        </span>
      </figcaption>
      <p className="live-answer-text">
        {omittedChars > 0 ? '… ' : ''}
        {text}
      </p>
    </figure>
  );
}

export function LiveAnswers() {
  const live = useApp((s) => s.timeline.live);
  const answers = liveAnswersInOrder(live);
  return (
    <section className="live-answer" aria-label="Streaming model answer" aria-live="polite" aria-atomic="false">
      {answers.map((answer) => (
        <LiveAnswerItem key={answer.step} {...answer} />
      ))}
    </section>
  );
}
