/**
 * Starting a run of an agent: pick the agent, fill in a form generated from its input schema
 * (lib/schema-form.ts: checked against the schema's own constraints as it is submitted) or,
 * with "Raw JSON", write the input as JSON (a skeleton is filled in from the schema; only
 * checked for being JSON here). The plane validates the input again and its answer is shown.
 */
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { AgentSummary } from '../../../src-shared/ipc/contract';
import { budgetLine } from '../lib/display-format';
import { cleanValue, formSupported, initialValue, validate, type JsonSchema } from '../lib/schema-form';
import { SchemaFields } from './schema-fields';
import { BrokenAgents } from './broken-agents';
import { useApp } from '../store/store-context';

/** `{"topic": ""}` from `{required: [topic], properties: {topic: {type: string}}}`. */
export function inputSkeleton(schema: Record<string, unknown>): string {
  const properties = (schema.properties ?? {}) as Record<string, { type?: string; default?: unknown }>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const skeleton: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (!required.has(name)) continue;
    skeleton[name] = property.default ?? (property.type === 'number' || property.type === 'integer' ? 0 : property.type === 'boolean' ? false : property.type === 'array' ? [] : '');
  }
  return JSON.stringify(skeleton, null, 2);
}

function agentHint(agent: AgentSummary): string {
  const approvals = agent.grants.filter((g) => g.approve).map((g) => `${g.kind} ${g.name}`);
  return `${agent.description} Budget: ${budgetLine(agent.budget)}.${approvals.length > 0 ? ` Needs approval for: ${approvals.join(', ')}.` : ''}`;
}

export function RunStartForm({ onClose }: { onClose(): void }) {
  const id = useId();
  const agents = useApp((s) => s.agents);
  const broken = useApp((s) => s.brokenAgents);
  const preset = useApp((s) => s.startAgent);
  const focusRequest = useApp((s) => s.startFormRequest);
  const startRun = useApp((s) => s.startRun);
  const openRun = useApp((s) => s.openRun);
  const [agentName, setAgentName] = useState(preset ?? agents[0]?.name ?? '');
  const agent = agents.find((a) => a.name === agentName);
  const [input, setInput] = useState(agent ? inputSkeleton(agent.inputSchema) : '{}');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const schema = (agent?.inputSchema ?? {}) as JsonSchema;
  const canForm = agent !== undefined && formSupported(schema);
  const [rawJson, setRawJson] = useState(false);
  const [formValue, setFormValue] = useState<Record<string, unknown>>(() => initialValue(schema));
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const fieldsRef = useRef<HTMLDivElement>(null);
  const asForm = canForm && !rawJson;
  // A new agent starts a new form, in the same render that shows its fields: reset in an effect,
  // the new agent's fields would first be committed with the old agent's values (a default such
  // as currency "USD" shown empty until the effect ran).
  const [formAgent, setFormAgent] = useState(agentName);
  if (formAgent !== agentName) {
    setFormAgent(agentName);
    setFormValue(initialValue(schema));
    setFieldErrors({});
  }

  const toggleRaw = (raw: boolean) => {
    if (raw) {
      setInput(JSON.stringify(cleanValue(schema, formValue), null, 2));
      setRawJson(true);
      setError(null);
      return;
    }
    try {
      const parsed: unknown = JSON.parse(input);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the input is not a JSON object');
      setFormValue(parsed as Record<string, unknown>);
      setRawJson(false);
      setError(null);
    } catch (e) {
      setError(`Fix the JSON before going back to the form: ${(e as Error).message}`);
    }
  };

  // The palette asked for this agent: preselect it and put the cursor in its input. Only a new
  // request does this; agents re-read on a reconnect must not overwrite what is being typed.
  const agentsRef = useRef(agents);
  agentsRef.current = agents;
  useEffect(() => {
    if (!preset) return;
    setAgentName(preset);
    const chosen = agentsRef.current.find((a) => a.name === preset);
    if (chosen) setInput(inputSkeleton(chosen.inputSchema));
    inputRef.current?.focus();
  }, [preset, focusRequest]);
  // The form opened before the agents arrived: take the first one when they do.
  useEffect(() => {
    if (agentName || agents.length === 0) return;
    setAgentName(agents[0]!.name);
    setInput(inputSkeleton(agents[0]!.inputSchema));
  }, [agentName, agents]);

  const choose = (name: string) => {
    setAgentName(name);
    const chosen = agents.find((a) => a.name === name);
    if (chosen) setInput(inputSkeleton(chosen.inputSchema));
    setError(null);
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    let parsed: unknown;
    if (asForm) {
      const value = cleanValue(schema, formValue);
      const found = validate(schema, value);
      setFieldErrors(found);
      const first = Object.keys(found)[0];
      if (first) {
        fieldsRef.current?.querySelector<HTMLElement>(`[data-field="${first}"]`)?.focus();
        return;
      }
      parsed = value;
    } else {
      try {
        parsed = JSON.parse(input);
      } catch (e) {
        setError(`The input is not JSON: ${(e as Error).message}`);
        inputRef.current?.focus();
        return;
      }
    }
    setBusy(true);
    const result = await startRun(agentName, parsed);
    setBusy(false);
    if (!result.ok) {
      setError(result.error.message);
      inputRef.current?.focus();
      return;
    }
    setError(null);
    onClose();
    openRun(result.value.runId);
  };

  return (
    <form className="panel form-grid" aria-labelledby={`${id}-title`} onSubmit={submit} noValidate>
      <h2 id={`${id}-title`}>Start a run</h2>
      <div className="field">
        <label htmlFor={`${id}-agent`}>Agent</label>
        <select id={`${id}-agent`} value={agentName} onChange={(e) => choose(e.target.value)} aria-describedby={`${id}-agent-hint`}>
          {agents.map((a) => (
            <option key={a.name} value={a.name}>
              {a.name}
            </option>
          ))}
          {broken.length > 0 ? (
            <optgroup label="Broken: fix the file to run">
              {broken.map((b) => (
                <option key={`${b.source}\u0000${b.name}`} value={`broken:${b.source}`} disabled>
                  {b.name} (broken)
                </option>
              ))}
            </optgroup>
          ) : null}
        </select>
        <span className="field-hint" id={`${id}-agent-hint`}>
          {agent ? agentHint(agent) : agentName ? `${agentName} can no longer be run (its file changed): pick another agent.` : 'No agents are loaded.'}
        </span>
      </div>
      <BrokenAgents broken={broken} />
      {canForm ? (
        <div className="field field-wide">
          <label className="choice">
            <input type="checkbox" checked={rawJson} onChange={(e) => toggleRaw(e.target.checked)} />
            Raw JSON
          </label>
        </div>
      ) : null}
      {asForm ? (
        <div className="field-wide form-grid" ref={fieldsRef}>
          <SchemaFields idBase={`${id}-in`} schema={schema} value={formValue} errors={fieldErrors} onChange={setFormValue} />
          {error ? (
            <p className="form-error field-wide" role="alert">
              {error}
            </p>
          ) : null}
        </div>
      ) : (
        <div className="field field-wide">
          <label htmlFor={`${id}-input`}>Input (JSON)</label>
          <textarea
            id={`${id}-input`}
            ref={inputRef}
            className="mono"
            rows={5}
            spellCheck={false}
            value={input}
            onChange={(e) => setInput(e.target.value)}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? `${id}-error` : `${id}-input-hint`}
          />
          <span className="field-hint" id={`${id}-input-hint`}>
            Checked by the plane against the agent&apos;s input schema.
          </span>
          {error ? (
            <span className="field-error" id={`${id}-error`} role="alert">
              {error}
            </span>
          ) : null}
        </div>
      )}
      <div className="form-actions field-wide">
        <button type="submit" className="button primary" disabled={busy || !agent}>
          {busy ? 'Starting…' : 'Start run'}
        </button>
        <button type="button" className="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
