/**
 * The plane's outside witness (docs/WITNESS.md): the submitter started beside the journal when
 * a witness URL is configured (`--witness`, AGENTPLANE_WITNESS_URL), and `witness.status`.
 * Without one the plane behaves as before: nothing is submitted and the status says so.
 */
import type { WitnessStatusView } from '../../src-shared/protocol/witness';
import type { Logger } from '../base/logger';
import type { Journal } from '../journal/journal';
import { WitnessSubmitter } from '../journal/witness/witness-client';

export const WITNESS_URL_ENV = 'AGENTPLANE_WITNESS_URL';

export function openWitnessSubmitter(
  journal: Journal,
  config: { witnessUrl?: string; witnessRetryMs?: number; env?: NodeJS.ProcessEnv },
  logger: Logger,
): WitnessSubmitter | null {
  const url = config.witnessUrl ?? (config.env ?? process.env)[WITNESS_URL_ENV];
  if (!url || journal.readOnly) return null;
  const submitter = new WitnessSubmitter(journal, url, (level, message) => logger.log(level, message), config.witnessRetryMs);
  // The checkpoint the last shutdown signed (or any the witness has not cosigned) goes now.
  submitter.kick();
  return submitter;
}

export function witnessStatusOf(submitter: WitnessSubmitter | null): WitnessStatusView {
  if (!submitter) return { configured: false, url: null, cosigned: null, checkpointSize: 0, lastError: null };
  return { configured: true, ...submitter.status() };
}
