/**
 * Forking a run from one of its steps (runs.fork, docs/GOVERNED-RUNTIME.md "Fork, replay,
 * diff"): every step before it is taken from the parent's record (nothing performed, nothing
 * spent), each step from it on is performed live. The input starts as the parent's, as JSON;
 * the model and the manifest are left as they were unless something is written. The plane
 * checks all of it again, and its refusal is shown as it words it; a fork made opens at once.
 */
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { modelOverrideProblem } from '../lib/run-diff';
import { useApp } from '../store/store-context';

export function ForkForm({ runId, at, onClose }: { runId: string; at: number; onClose(): void }) {
  const id = useId();
  const readRunInput = useApp((s) => s.readRunInput);
  const forkRun = useApp((s) => s.forkRun);
  const openRun = useApp((s) => s.openRun);
  const [parentInput, setParentInput] = useState<string | null>(null);
  const [input, setInput] = useState('');
  const [model, setModel] = useState('');
  const [manifest, setManifest] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [modelError, setModelError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    let live = true;
    setParentInput(null);
    void readRunInput(runId).then((result) => {
      if (!live) return;
      // Without the parent's input, the field starts empty: the fork then keeps the parent's.
      const text = result.ok ? JSON.stringify(result.value, null, 2) : '';
      setParentInput(text);
      setInput(text);
      if (!result.ok) setError(`Could not read the parent's input: ${result.error.message}`);
    });
    return () => {
      live = false;
    };
  }, [runId, readRunInput]);
  // The form takes the focus where it opened, so a keyboard user lands in it.
  useEffect(() => headingRef.current?.focus(), [at]);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const badModel = modelOverrideProblem(model);
    setModelError(badModel);
    let parsed: unknown;
    // Left as the parent's, the input is not sent: the fork records no change of input.
    const changedInput = input.trim() !== '' && input !== parentInput;
    if (changedInput) {
      try {
        parsed = JSON.parse(input);
      } catch (e) {
        setError(`The input is not JSON: ${(e as Error).message}`);
        inputRef.current?.focus();
        return;
      }
    }
    if (badModel) return;
    setBusy(true);
    const result = await forkRun({
      runId,
      at,
      ...(changedInput ? { input: parsed } : {}),
      ...(model.trim() ? { model: model.trim() } : {}),
      ...(manifest.trim() ? { manifest } : {}),
    });
    setBusy(false);
    if (!result.ok) {
      setError(result.error.message);
      return;
    }
    setError(null);
    onClose();
    openRun(result.value.runId);
  };

  return (
    <form className="panel form-grid time-travel-form" aria-labelledby={`${id}-title`} onSubmit={submit} noValidate>
      <h3 id={`${id}-title`} ref={headingRef} tabIndex={-1}>
        Fork from step {at}
      </h3>
      <p className="field-wide muted">
        Steps before {at} are taken from this run&apos;s record while they ask what they asked here (nothing performed or spent for them); from the first that asks otherwise, and from step {at} on, the fork runs live under today&apos;s policy, grants and budget.
      </p>
      <div className="field field-wide">
        <label htmlFor={`${id}-input`}>Input (JSON)</label>
        <textarea
          id={`${id}-input`}
          ref={inputRef}
          className="mono"
          rows={3}
          spellCheck={false}
          value={input}
          disabled={parentInput === null}
          onChange={(e) => setInput(e.target.value)}
          aria-describedby={`${id}-input-hint`}
        />
        <span className="field-hint" id={`${id}-input-hint`}>
          {parentInput === null ? 'Reading the parent run’s input…' : 'The parent run’s input; edit it to fork with another.'}
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
          aria-describedby={modelError ? `${id}-model-error` : `${id}-model-hint`}
        />
        {modelError ? (
          <span className="field-error" id={`${id}-model-error`} role="alert">
            {modelError}
          </span>
        ) : (
          <span className="field-hint" id={`${id}-model-hint`}>
            Every model step uses it instead of the manifest&apos;s.
          </span>
        )}
      </div>
      <div className="field field-wide">
        <label htmlFor={`${id}-manifest`}>Manifest (optional, YAML or JSON)</label>
        <textarea id={`${id}-manifest`} className="mono" rows={2} spellCheck={false} value={manifest} onChange={(e) => setManifest(e.target.value)} aria-describedby={`${id}-manifest-hint`} />
        <span className="field-hint" id={`${id}-manifest-hint`}>
          Left empty, the agent&apos;s declared manifest. Its name must stay the agent&apos;s.
        </span>
      </div>
      {error ? (
        <p className="form-error field-wide" role="alert">
          {error}
        </p>
      ) : null}
      <div className="form-actions field-wide">
        <button type="submit" className="button primary" disabled={busy || parentInput === null}>
          {busy ? 'Forking…' : 'Fork run'}
        </button>
        <button type="button" className="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
