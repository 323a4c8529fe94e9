/** A run's state in words: running, waiting (and for what), or how it ended. */
import type { RunView } from '../../../src-shared/ipc/contract';
import { StatusPill, type Tone } from '../components/status-pill';
import { REASON_LABELS } from '../lib/wait-description';

const OUTCOMES: Record<NonNullable<RunView['outcome']>, { label: string; tone: Tone }> = {
  succeeded: { label: 'Succeeded', tone: 'ok' },
  failed: { label: 'Failed', tone: 'bad' },
  cancelled: { label: 'Cancelled', tone: 'warn' },
  denied: { label: 'Denied', tone: 'bad' },
  halted: { label: 'Halted', tone: 'warn' },
  observed: { label: 'Observed', tone: 'info' },
};

export function runStatusText(run: Pick<RunView, 'status' | 'outcome' | 'pending'>): string {
  if (run.status === 'running') return 'Running';
  if (run.status === 'suspended') return run.pending ? `Waiting: ${REASON_LABELS[run.pending.reason].toLowerCase()}` : 'Waiting';
  return run.outcome ? OUTCOMES[run.outcome].label : 'Ended';
}

export function RunStatus({ run }: { run: Pick<RunView, 'status' | 'outcome' | 'pending'> }) {
  const tone: Tone = run.status === 'running' ? 'busy' : run.status === 'suspended' ? 'warn' : run.outcome ? OUTCOMES[run.outcome].tone : 'plain';
  return <StatusPill tone={tone}>{runStatusText(run)}</StatusPill>;
}
