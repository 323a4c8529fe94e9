/**
 * Adding an MCP server for the plane's agents to call: a name, then either a command the plane
 * starts (stdio: the program, its arguments one per line, environment variables as KEY=VALUE
 * lines) or a Streamable HTTP URL (with `Name: value` header lines). Each field is checked on
 * submit by the contract's own rules (lib/mcp-server-form.ts), its error beside it and focus
 * moved to the first; what the plane still refuses (a name already declared…) is shown at the
 * form in the plane's own words.
 *
 * Environment and header values are typed here and sent once; the plane keeps them in its
 * private data dir and never shows them again (only their names).
 */
import { useId, useRef, useState, type FormEvent } from 'react';
import { EMPTY_MCP_SERVER_FORM, mcpServerRequestOf, type McpServerFormErrors, type McpServerFormField, type McpServerFormValues } from '../lib/mcp-server-form';
import { useApp } from '../store/store-context';

const FIELD_ORDER: McpServerFormField[] = ['name', 'command', 'args', 'env', 'url', 'headers'];

export function McpServerForm({ onClose }: { onClose(added?: string): void }) {
  const addMcpServer = useApp((s) => s.addMcpServer);
  const mcpServerAction = useApp((s) => s.mcpServerAction);
  const formId = useId();
  const [values, setValues] = useState<McpServerFormValues>(EMPTY_MCP_SERVER_FORM);
  const [connectAfter, setConnectAfter] = useState(true);
  const [errors, setErrors] = useState<McpServerFormErrors>({});
  const [busy, setBusy] = useState(false);
  const refs = useRef<Partial<Record<McpServerFormField, HTMLInputElement | HTMLTextAreaElement | null>>>({});

  const set = (patch: Partial<McpServerFormValues>) => setValues((v) => ({ ...v, ...patch }));
  const field = (name: McpServerFormField, hint: boolean) => ({
    id: `${formId}-${name}`,
    'aria-invalid': errors[name] ? true : undefined,
    'aria-describedby': errors[name] ? `${formId}-${name}-error` : hint ? `${formId}-${name}-hint` : undefined,
    ref: (el: HTMLInputElement | HTMLTextAreaElement | null) => {
      refs.current[name] = el;
    },
  });
  const errorText = (name: McpServerFormField) =>
    errors[name] ? (
      <span className="field-error" id={`${formId}-${name}-error`}>
        {errors[name]}
      </span>
    ) : null;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const out = mcpServerRequestOf(values);
    if ('errors' in out) {
      setErrors(out.errors);
      const first = FIELD_ORDER.find((k) => out.errors[k]);
      if (first) refs.current[first]?.focus();
      return;
    }
    setErrors({});
    setBusy(true);
    const result = await addMcpServer(out.request);
    setBusy(false);
    if (!result.ok) {
      // The plane's refusal, as it said it; a name already declared belongs beside the name.
      if (/already (declared|exists)/i.test(result.error.message)) {
        setErrors({ name: result.error.message });
        refs.current.name?.focus();
      } else setErrors({ form: result.error.message });
      return;
    }
    onClose(out.request.name);
    if (connectAfter) void mcpServerAction(out.request.name, 'connect');
  };

  return (
    <form className="panel form-grid" aria-labelledby={`${formId}-title`} onSubmit={submit} noValidate>
      <h2 id={`${formId}-title`}>Add an MCP server</h2>
      <div className="field">
        <label htmlFor={`${formId}-name`}>Name</label>
        <input {...field('name', true)} value={values.name} autoComplete="off" spellCheck={false} autoFocus onChange={(e) => set({ name: e.target.value })} />
        <span className="field-hint" id={`${formId}-name-hint`}>
          Lowercase, e.g. <code>github</code>. Steps and grants name its tools as <code>&lt;name&gt;/&lt;tool&gt;</code>.
        </span>
        {errorText('name')}
      </div>
      <fieldset className="field">
        <legend>Transport</legend>
        <div className="radio-row">
          {(
            [
              ['stdio', 'stdio (a command the plane starts)'],
              ['http', 'Streamable HTTP (a URL)'],
            ] as const
          ).map(([value, label]) => (
            <label key={value} className="choice">
              <input type="radio" name={`${formId}-transport`} value={value} checked={values.transport === value} onChange={() => set({ transport: value })} />
              {label}
            </label>
          ))}
        </div>
      </fieldset>
      {values.transport === 'stdio' ? (
        <>
          <div className="field field-wide">
            <label htmlFor={`${formId}-command`}>Command</label>
            <input {...field('command', true)} value={values.command} autoComplete="off" spellCheck={false} onChange={(e) => set({ command: e.target.value })} />
            <span className="field-hint" id={`${formId}-command-hint`}>
              The program only, e.g. <code>node</code> or <code>npx</code>; it runs in the data dir’s workspace.
            </span>
            {errorText('command')}
          </div>
          <div className="field">
            <label htmlFor={`${formId}-args`}>Arguments, one per line</label>
            <textarea {...field('args', true)} rows={3} spellCheck={false} value={values.args} onChange={(e) => set({ args: e.target.value })} />
            <span className="field-hint" id={`${formId}-args-hint`}>
              Each line is one argument, spaces included.
            </span>
            {errorText('args')}
          </div>
          <div className="field">
            <label htmlFor={`${formId}-env`}>Environment, KEY=VALUE lines (optional)</label>
            <textarea {...field('env', true)} rows={3} spellCheck={false} autoComplete="off" value={values.env} onChange={(e) => set({ env: e.target.value })} />
            <span className="field-hint" id={`${formId}-env-hint`}>
              Values are kept in the plane’s private data dir and never shown again; only the names are.
            </span>
            {errorText('env')}
          </div>
        </>
      ) : (
        <>
          <div className="field field-wide">
            <label htmlFor={`${formId}-url`}>URL</label>
            <input {...field('url', true)} type="url" value={values.url} autoComplete="off" spellCheck={false} onChange={(e) => set({ url: e.target.value })} />
            <span className="field-hint" id={`${formId}-url-hint`}>
              The server’s Streamable HTTP endpoint, e.g. <code>http://127.0.0.1:3001/mcp</code>.
            </span>
            {errorText('url')}
          </div>
          <div className="field field-wide">
            <label htmlFor={`${formId}-headers`}>Headers, Name: value lines (optional)</label>
            <textarea {...field('headers', true)} rows={3} spellCheck={false} autoComplete="off" value={values.headers} onChange={(e) => set({ headers: e.target.value })} />
            <span className="field-hint" id={`${formId}-headers-hint`}>
              e.g. <code>Authorization: Bearer …</code>. Values are kept in the plane’s private data dir and never shown again; only the names are.
            </span>
            {errorText('headers')}
          </div>
        </>
      )}
      <div className="field field-checks field-wide">
        <label className="choice">
          <input type="checkbox" checked={connectAfter} onChange={(e) => setConnectAfter(e.target.checked)} />
          Connect after adding
        </label>
      </div>
      {errors.form ? (
        <p className="form-error field-wide" role="alert">
          {errors.form}
        </p>
      ) : null}
      <div className="form-actions field-wide">
        <button type="submit" className="button primary" disabled={busy}>
          {busy ? 'Adding…' : 'Add server'}
        </button>
        <button type="button" className="button" onClick={() => onClose()}>
          Cancel
        </button>
      </div>
    </form>
  );
}
