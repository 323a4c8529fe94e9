/**
 * A dry replay of a recorded run (runs.replay, docs/GOVERNED-RUNTIME.md "Fork, replay, diff"):
 * the run's steps walked again against a changed manifest, model or input, performing nothing,
 * and where it would first diverge, and why. Nothing written replays the run as it is (which
 * should not diverge: a divergence then says the agent's code or grants changed under it).
 */
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { ReplayReport } from '../../../src-shared/protocol/time-travel';
import { StatusPill } from '../components/status-pill';
import { modelOverrideProblem, parseOptionalJson, replayWords, sideEffect, valueWords } from '../lib/run-diff';
import { useApp } from '../store/store-context';

function ReplayAnswer({ report }: { report: ReplayReport }) {
  return (
    <>
      <StatusPill tone={report.divergesAt ? 'warn' : 'ok'}>{replayWords(report)}</StatusPill>
      {report.divergesAt ? (
        <dl className="facts">
          <dt>Replayed</dt>
          <dd>
            {report.replayed} of {report.steps} recorded steps
          </dd>
          {report.expected ? (
            <>
              <dt>Recorded</dt>
              <dd className="mono">
                {sideEffect(report.expected)} {valueWords(report.expected.request).text}
              </dd>
            </>
          ) : null}
          {report.actual ? (
            <>
              <dt>Would do</dt>
              <dd className="mono">
                {report.actual.effect} {report.actual.name} {valueWords(report.actual.request).text}
              </dd>
            </>
          ) : null}
        </dl>
      ) : null}
    </>
  );
}

export function ReplayForm({ runId, onClose }: { runId: string; onClose(): void }) {
  const id = useId();
  const replayRun = useApp((s) => s.replayRun);
  const [manifest, setManifest] = useState('');
  const [model, setModel] = useState('');
  const [input, setInput] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [modelError, setModelError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [report, setReport] = useState<ReplayReport | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const badModel = modelOverrideProblem(model);
    setModelError(badModel);
    const parsed = parseOptionalJson(input);
    if (!parsed.ok) {
      setError(parsed.error);
      return;
    }
    if (badModel) return;
    setBusy(true);
    setReport(null);
    const result = await replayRun({
      runId,
      ...(manifest.trim() ? { manifest } : {}),
      ...(model.trim() ? { model: model.trim() } : {}),
      ...(parsed.value !== undefined ? { input: parsed.value } : {}),
    });
    setBusy(false);
    if (!result.ok) {
      setError(result.error.message);
      return;
    }
    setError(null);
    setReport(result.value);
  };

  return (
    <form className="panel form-grid time-travel-form" aria-labelledby={`${id}-title`} onSubmit={submit} noValidate>
      <h3 id={`${id}-title`} ref={headingRef} tabIndex={-1}>
        Dry replay
      </h3>
      <p className="field-wide muted">Walks this run&apos;s recorded steps again with what you change here, performing nothing, and says where it would first diverge.</p>
      <div className="field field-wide">
        <label htmlFor={`${id}-manifest`}>Manifest (optional, YAML or JSON)</label>
        <textarea id={`${id}-manifest`} className="mono" rows={3} spellCheck={false} value={manifest} onChange={(e) => setManifest(e.target.value)} aria-describedby={`${id}-manifest-hint`} />
        <span className="field-hint" id={`${id}-manifest-hint`}>
          Left empty, the agent&apos;s declared manifest.
        </span>
      </div>
      <div className="field">
        <label htmlFor={`${id}-model`}>Model (optional)</label>
        <input
          id={`${id}-model`}
          className="mono"
          value={model}
          placeholder="provider:model"
          spellCheck={false}
          onChange={(e) => setModel(e.target.value)}
          aria-invalid={modelError ? true : undefined}
          aria-describedby={modelError ? `${id}-model-error` : undefined}
        />
        {modelError ? (
          <span className="field-error" id={`${id}-model-error`} role="alert">
            {modelError}
          </span>
        ) : null}
      </div>
      <div className="field field-wide">
        <label htmlFor={`${id}-input`}>Input (optional, JSON)</label>
        <textarea id={`${id}-input`} className="mono" rows={2} spellCheck={false} value={input} onChange={(e) => setInput(e.target.value)} aria-describedby={`${id}-input-hint`} />
        <span className="field-hint" id={`${id}-input-hint`}>
          Left empty, the run&apos;s own input.
        </span>
      </div>
      {error ? (
        <p className="form-error field-wide" role="alert">
          {error}
        </p>
      ) : null}
      <div className="field-wide replay-answer" role="status" aria-label="Replay result">
        {report ? <ReplayAnswer report={report} /> : null}
      </div>
      <div className="form-actions field-wide">
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? 'Replaying…' : 'Replay'}
        </button>
        <button type="button" className="button" onClick={onClose}>
          Close
        </button>
      </div>
    </form>
  );
}
