/**
 * Settings: the model providers (Anthropic, OpenAI Responses, Gemini, an OpenAI-compatible chat
 * server), each with its status, where each value comes from, a form to save a key, base URL
 * and default model, Remove, and "Test connection" (one tiny real call; the latency, or the
 * provider's own error).
 *
 * The key field is a password field, never prefilled (the plane never sends a key back) and
 * cleared once the plane has taken it, so the key does not linger in the page. A value set by
 * an AGENTPLANE_* variable wins over Settings: it is shown read-only with the variable's name,
 * because editing it here would change nothing until that variable is unset.
 *
 * Outbound connections: netguard refuses loopback, private and metadata addresses unless the
 * exact origin is allowed. The person's own entries can be removed here; entries derived from a
 * configured provider or MCP server are shown read-only with where they come from, since they
 * go when that provider or server goes.
 */
import { useEffect, useId, useState, type FormEvent } from 'react';
import type { ProviderView, SettableProvider } from '../../../src-shared/protocol/providers';
import { Fact } from '../components/fact';
import { StatusPill } from '../components/status-pill';
import type { NetAllowEntry } from '../../../src-shared/protocol/net-allow';
import { useApp } from '../store/store-context';
import { ErasureSettings } from './erasure-settings';

const TITLES: Record<SettableProvider, string> = {
  anthropic: 'Anthropic',
  openai: 'OpenAI',
  gemini: 'Google Gemini',
  chat: 'OpenAI-compatible chat server',
};

/** Where a value came from, in words. */
function Source({ source, variable }: { source: ProviderView['keySource']; variable: string }) {
  if (source === 'env') {
    return (
      <span className="muted">
        {' '}
        (from <code>{variable}</code>, read-only here)
      </span>
    );
  }
  return source === 'settings' ? <span className="muted"> (saved here)</span> : null;
}

function ProviderForm({ view }: { view: ProviderView }) {
  const formId = useId();
  const save = useApp((s) => s.saveProvider);
  const remove = useApp((s) => s.removeProvider);
  const busy = useApp((s) => s.providerBusy[view.id]);
  const error = useApp((s) => s.providerErrors[view.id]);
  const stored = (value: string | null, source: ProviderView['keySource']) => (source === 'settings' ? (value ?? '') : '');
  const [key, setKey] = useState('');
  const [baseUrl, setBaseUrl] = useState(stored(view.baseUrl, view.baseUrlSource));
  const [model, setModel] = useState(stored(view.model, view.modelSource));
  const [confirming, setConfirming] = useState(false);
  // The plane's view changed (a save, another client): the fields follow what is stored.
  useEffect(() => setBaseUrl(stored(view.baseUrl, view.baseUrlSource)), [view.baseUrl, view.baseUrlSource]);
  useEffect(() => setModel(stored(view.model, view.modelSource)), [view.model, view.modelSource]);
  const anythingSaved = view.keySource === 'settings' || view.baseUrlSource === 'settings' || view.modelSource === 'settings';

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const was = { baseUrl: stored(view.baseUrl, view.baseUrlSource), model: stored(view.model, view.modelSource) };
    const request = {
      provider: view.id,
      ...(key.trim() ? { apiKey: key.trim() } : {}),
      ...(view.baseUrlSource !== 'env' && baseUrl.trim() !== was.baseUrl ? { baseUrl: baseUrl.trim() || null } : {}),
      ...(view.modelSource !== 'env' && model.trim() !== was.model ? { model: model.trim() || null } : {}),
    };
    // Cleared whatever the answer: the key is the plane's to keep, not the page's.
    setKey('');
    await save(request);
  };

  return (
    <form className="form-grid" aria-label={`${TITLES[view.id]} settings`} onSubmit={submit} noValidate>
      <div className="field field-wide">
        <label htmlFor={`${formId}-key`}>API key</label>
        {view.keySource === 'env' ? (
          <input id={`${formId}-key`} readOnly value={`set by ${view.variables.apiKey}`} aria-describedby={`${formId}-key-hint`} />
        ) : (
          <input
            id={`${formId}-key`}
            type="password"
            value={key}
            autoComplete="off"
            spellCheck={false}
            aria-describedby={`${formId}-key-hint`}
            onChange={(e) => setKey(e.target.value)}
          />
        )}
        <span className="field-hint" id={`${formId}-key-hint`}>
          {view.keySource === 'env'
            ? `${view.variables.apiKey} was set when this plane started; it wins over a key saved here.`
            : view.keySet
              ? `A key is saved${view.keyHint ? ` (ending ${view.keyHint.slice(1)})` : ''}; type a new one to replace it, or leave empty to keep it.`
              : view.id === 'chat'
                ? 'Optional: most self-hosted servers need none.'
                : 'Kept by the plane (never shown again) and sent only to this provider.'}
        </span>
      </div>
      <div className="field field-wide">
        <label htmlFor={`${formId}-base`}>Base URL</label>
        {view.baseUrlSource === 'env' ? (
          <input id={`${formId}-base`} readOnly value={view.baseUrl ?? ''} aria-describedby={`${formId}-base-hint`} />
        ) : (
          <input id={`${formId}-base`} type="url" value={baseUrl} autoComplete="off" spellCheck={false} aria-describedby={`${formId}-base-hint`} onChange={(e) => setBaseUrl(e.target.value)} />
        )}
        <span className="field-hint" id={`${formId}-base-hint`}>
          {view.baseUrlSource === 'env'
            ? `Set by ${view.variables.baseUrl}.`
            : view.id === 'chat'
              ? 'Required: the server’s URL including /v1, e.g. http://127.0.0.1:11434/v1 (Ollama).'
              : 'Optional: leave empty for the provider’s own endpoint.'}
        </span>
      </div>
      <div className="field">
        <label htmlFor={`${formId}-model`}>Default model</label>
        {view.modelSource === 'env' ? (
          <input id={`${formId}-model`} readOnly value={view.model ?? ''} aria-describedby={`${formId}-model-hint`} />
        ) : (
          <input id={`${formId}-model`} value={model} autoComplete="off" spellCheck={false} aria-describedby={`${formId}-model-hint`} onChange={(e) => setModel(e.target.value)} />
        )}
        <span className="field-hint" id={`${formId}-model-hint`}>
          {view.modelSource === 'env' ? `Set by ${view.variables.model}.` : 'Used by steps that name no model, and by the connection test.'}
        </span>
      </div>
      {error ? (
        <p className="form-error field-wide" role="alert">
          {error}
        </p>
      ) : null}
      <div className="form-actions field-wide">
        <button type="submit" className="button primary" disabled={busy !== undefined} aria-label={`Save ${TITLES[view.id]} settings`}>
          {busy === 'save' ? 'Saving…' : 'Save'}
        </button>
        {confirming ? (
          <>
            <span>Forget the saved {TITLES[view.id]} settings{view.keySource === 'settings' ? ', key included' : ''}?{' '}
              {view.keySource === 'env' || view.baseUrlSource === 'env' || view.modelSource === 'env' ? 'The environment’s values stay in force.' : 'Runs naming it are refused until it is set again.'}
            </span>
            <button type="button" className="button danger" disabled={busy !== undefined} onClick={() => void remove(view.id).then(() => setConfirming(false))}>
              {busy === 'remove' ? 'Removing…' : 'Yes, remove'}
            </button>
            <button type="button" className="button" onClick={() => setConfirming(false)}>
              Keep them
            </button>
          </>
        ) : (
          <button type="button" className="button danger" disabled={busy !== undefined || !anythingSaved} onClick={() => setConfirming(true)} aria-label={`Remove the saved ${TITLES[view.id]} settings…`}>
            Remove…
          </button>
        )}
      </div>
    </form>
  );
}

function ConnectionTest({ view }: { view: ProviderView }) {
  const inputId = useId();
  const test = useApp((s) => s.testProvider);
  const busy = useApp((s) => s.providerBusy[view.id]);
  const result = useApp((s) => s.providerTests[view.id]);
  const [model, setModel] = useState('');
  return (
    <div className="inline-form">
      <div className="field">
        <label htmlFor={inputId}>Model to test</label>
        <input id={inputId} value={model} placeholder={view.model ?? 'a model name'} autoComplete="off" spellCheck={false} onChange={(e) => setModel(e.target.value)} />
      </div>
      <button type="button" className="button small" disabled={busy !== undefined || !view.configured} onClick={() => void test(view.id, model.trim() || undefined)} aria-label={`Test connection to ${TITLES[view.id]}`}>
        {busy === 'test' ? 'Testing…' : 'Test connection'}
      </button>
      <span role="status" aria-label={`${TITLES[view.id]} connection test`}>
        {result ? result.ok ? <StatusPill tone="ok">{`OK: ${result.model} answered in ${result.latencyMs} ms`}</StatusPill> : <span className="inline-error">{`Failed: ${result.error}`}</span> : null}
      </span>
    </div>
  );
}

function ProviderCard({ view }: { view: ProviderView }) {
  const headingId = useId();
  return (
    <article className="panel" aria-labelledby={headingId}>
      <div className="panel-head">
        <h3 id={headingId}>{TITLES[view.id]}</h3>
        <StatusPill tone={view.configured ? 'ok' : 'plain'}>{view.configured ? 'Configured' : 'Not configured'}</StatusPill>
      </div>
      <p className="muted">
        {view.what}; a step names it as <code>provider: {view.id}</code>.
      </p>
      <dl className="facts facts-inline">
        <Fact label="Key">
          {view.keySet ? `set${view.keyHint ? ` (${view.keyHint})` : ''}` : 'none'}
          <Source source={view.keySource} variable={view.variables.apiKey} />
        </Fact>
        <Fact label="Base URL">
          {view.baseUrl ? <code>{view.baseUrl}</code> : view.id === 'chat' ? 'none' : 'the provider’s own'}
          <Source source={view.baseUrlSource} variable={view.variables.baseUrl} />
        </Fact>
        <Fact label="Default model">
          {view.model ? <code>{view.model}</code> : 'none'}
          <Source source={view.modelSource} variable={view.variables.model} />
        </Fact>
      </dl>
      <ProviderForm view={view} />
      <ConnectionTest view={view} />
    </article>
  );
}

function derivedFrom(entry: NetAllowEntry): string {
  if (entry.source === 'provider') return `from the ${entry.from ?? ''} provider’s base URL`;
  if (entry.source === 'mcp-server') return `from the MCP server ${entry.from ?? ''}`;
  return '';
}

function OutboundConnections() {
  const headingId = useId();
  const inputId = useId();
  const list = useApp((s) => s.netAllow);
  const error = useApp((s) => s.netAllowError);
  const actionError = useApp((s) => s.netAllowActionError);
  const busy = useApp((s) => s.netAllowBusy);
  const refresh = useApp((s) => s.refreshNetAllow);
  const add = useApp((s) => s.addNetAllow);
  const remove = useApp((s) => s.removeNetAllow);
  const [origin, setOrigin] = useState('');
  useEffect(() => void refresh(), [refresh]);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (await add(origin.trim())) setOrigin('');
  };
  return (
    <section className="stack" aria-labelledby={headingId}>
      <h2 id={headingId}>Outbound connections</h2>
      <p>
        The plane refuses to connect to your own network (loopback, private and link-local addresses) and to the cloud metadata address, whatever a card, a redirect or a DNS answer says, unless the
        exact origin is allowed here. A provider or MCP server you configured is allowed by itself.
      </p>
      {error ? (
        <p className="inline-error" role="alert">
          Could not read the allow list: {error}
        </p>
      ) : null}
      {list ? (
        list.entries.length === 0 ? (
          <p className="muted">Nothing is allowed beyond the public internet.</p>
        ) : (
          <ul className="allow-list" aria-label="Allowed origins">
            {list.entries.map((entry) => (
              <li key={`${entry.source}:${entry.origin}:${entry.from ?? ''}`}>
                <code>{entry.origin}</code>{' '}
                {entry.source === 'allow-list' ? (
                  <button type="button" className="button small danger" disabled={busy} onClick={() => void remove(entry.origin)} aria-label={`Remove ${entry.origin} from the allow list`}>
                    Remove
                  </button>
                ) : (
                  <span className="muted">({derivedFrom(entry)}; read-only here)</span>
                )}
              </li>
            ))}
          </ul>
        )
      ) : error ? null : (
        <p className="muted">Reading the allow list…</p>
      )}
      <form className="inline-form" aria-label="Allow an origin" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={inputId}>Origin to allow</label>
          <input
            id={inputId}
            value={origin}
            placeholder="http://127.0.0.1:8080"
            autoComplete="off"
            spellCheck={false}
            aria-describedby={`${inputId}-hint`}
            aria-invalid={actionError ? true : undefined}
            onChange={(e) => setOrigin(e.target.value)}
          />
          <span className="field-hint" id={`${inputId}-hint`}>
            An exact origin: scheme, host and port{list ? <>; saved in <code>{list.file}</code></> : null}.
          </span>
        </div>
        <button type="submit" className="button small primary" disabled={busy || origin.trim() === ''}>
          {busy ? 'Saving…' : 'Allow'}
        </button>
      </form>
      {actionError ? (
        <p className="form-error" role="alert">
          {actionError}
        </p>
      ) : null}
    </section>
  );
}

export function SettingsSection({ empty }: { empty: string }) {
  const headingId = useId();
  const list = useApp((s) => s.providersList);
  const error = useApp((s) => s.providersError);
  const refresh = useApp((s) => s.refreshProviders);
  useEffect(() => void refresh(), [refresh]);
  return (
    <div className="section-body">
      <section className="stack" aria-labelledby={headingId}>
        <h2 id={headingId}>Model providers</h2>
        <p>{empty}</p>
        {list ? (
          <p className="muted">
            Saved in <code>{list.file}</code> {list.sealed ? '(keys sealed with the system keychain).' : '(a file only you can read).'}
          </p>
        ) : null}
        {error ? (
          <p className="inline-error" role="alert">
            Could not read the provider settings: {error}
          </p>
        ) : null}
        {list?.error ? (
          <p className="inline-error" role="alert">
            Saved settings are not in force: {list.error}
          </p>
        ) : null}
        {list ? list.providers.map((view) => <ProviderCard key={view.id} view={view} />) : error ? null : <p className="muted">Reading the provider settings…</p>}
      </section>
      <OutboundConnections />
      <ErasureSettings />
    </div>
  );
}
