/**
 * Agent files the plane could not load (`agents.list`'s `broken`, kept current by the
 * `agents.changed` event): each with its file, the field at fault and what to do, where runs
 * are started. Not runnable until the file is fixed; the plane reads it again when it changes.
 */
import type { BrokenAgent } from '../../../src-shared/ipc/contract';

/** `input: the manifest has no input schema: add …`, or `line 3: …` for a file that does not parse. */
export function brokenAgentProblem(broken: BrokenAgent): string {
  if (broken.field !== null) return `${broken.field}: ${broken.problem}`;
  if (broken.line !== null && !broken.problem.includes(`line ${broken.line}`)) return `line ${broken.line}: ${broken.problem}`;
  return broken.problem;
}

export function BrokenAgents({ broken }: { broken: readonly BrokenAgent[] }) {
  if (broken.length === 0) return null;
  return (
    <section className="field field-wide broken-agents" aria-label="Broken agent files">
      <span className="form-error">
        {broken.length === 1 ? 'One agent file does not load' : `${broken.length} agent files do not load`}; fix the file and the plane reads it again:
      </span>
      <ul>
        {broken.map((b) => (
          <li key={`${b.source}\u0000${b.name}`}>
            <strong>{b.name}</strong> <code className="mono">{b.source}</code>
            <br />
            <span>{brokenAgentProblem(b)}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
