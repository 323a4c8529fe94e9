/**
 * One peer up close: its configuration, who may call which of its skills, and two actions a
 * person takes *as this peer*: send a prompt to another peer (its `ask` skill) and request a
 * payment (its `pay` skill). Both go through `peers.call`, signed with this peer's own
 * identity for the callee alone; the callee admits each call as a run, which shows in Runs
 * (and, for a payment, waits in Approvals).
 */
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { PeerSummary } from '../../../src-shared/ipc/contract';
import { PENDING_APPROVAL } from '../../../src-shared/protocol/mcpv2';
import { CopyButton } from '../components/copy-button';
import { JsonBlock } from '../components/json-block';
import { StatusPill } from '../components/status-pill';
import { dateTime } from '../lib/display-format';
import { useApp } from '../store/store-context';
import { PEER_STATUS } from './peers-section';
import { PeerPing } from './peer-ping';

const AUTH_LABELS: Record<PeerSummary['auth'], string> = {
  both: 'Peer identity or shared secret',
  identity: 'Peer identity only',
  'shared-secret': 'Shared secret only',
};

function OtherPeerSelect({ id, value, onChange, peers }: { id: string; value: string; onChange(v: string): void; peers: PeerSummary[] }) {
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
      {peers.length === 0 ? <option value="">No other peer</option> : null}
      {peers.map((p) => (
        <option key={p.id} value={p.id}>
          {p.name} ({p.id}){p.status === 'running' ? '' : ` — ${p.status}`}
        </option>
      ))}
    </select>
  );
}

/**
 * Why a peer cannot call another right now, or null when it can: the calls go out through the
 * peer's own process, so a stopped or failed peer has nobody to send them.
 */
export function callUnavailable(peer: PeerSummary, what: string): string | null {
  if (peer.revoked) return `${peer.id} is revoked, so it cannot ${what}.`;
  if (peer.status === 'running') return null;
  if (peer.status === 'failed') return `${peer.id} failed to start${peer.error ? ` (${peer.error})` : ''}: start it again to ${what}.`;
  if (peer.status === 'starting') return `${peer.id} is still starting: wait until it is running to ${what}.`;
  return `${peer.id} is ${peer.status}: start it to ${what}.`;
}

function UnavailableReason({ id, reason }: { id: string; reason: string | null }) {
  return reason ? (
    <p className="muted" id={id}>
      {reason}
    </p>
  ) : null;
}

function SendPrompt({ peer, others }: { peer: PeerSummary; others: PeerSummary[] }) {
  const id = useId();
  const callPeer = useApp((s) => s.callPeer);
  const call = useApp((s) => s.peerCalls[`${peer.id}/ask`]);
  const [to, setTo] = useState(others.find((p) => p.status === 'running')?.id ?? others[0]?.id ?? '');
  const [query, setQuery] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!to) return setProblem('Choose the peer to ask.');
    if (!query.trim()) return setProblem('Write the prompt to send.');
    setProblem(null);
    void callPeer(peer.id, to, 'ask', { query: query.trim() });
  };
  const response = (call?.result as { response?: unknown } | undefined)?.response;
  const unavailable = callUnavailable(peer, 'send a prompt');
  return (
    <form className="panel stack" aria-labelledby={`${id}-title`} onSubmit={submit} noValidate>
      <h3 id={`${id}-title`}>Send a prompt</h3>
      <p className="muted">
        {peer.id} asks another peer with its own identity; the answer is that peer&apos;s <code>ask</code> skill, run and journaled there.
      </p>
      <div className="field">
        <label htmlFor={`${id}-to`}>To peer</label>
        <OtherPeerSelect id={`${id}-to`} value={to} onChange={setTo} peers={others} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-query`}>Prompt</label>
        <textarea id={`${id}-query`} rows={3} value={query} onChange={(e) => setQuery(e.target.value)} aria-invalid={problem && !query.trim() ? true : undefined} />
      </div>
      {problem ? (
        <p className="form-error" role="alert">
          {problem}
        </p>
      ) : null}
      <UnavailableReason id={`${id}-unavailable`} reason={unavailable} />
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={call?.busy || unavailable !== null} aria-describedby={unavailable ? `${id}-unavailable` : undefined}>
          {call?.busy ? (
            <>
              <span className="spinner" aria-hidden="true" /> Sending…
            </>
          ) : (
            'Send prompt'
          )}
        </button>
      </div>
      {call && !call.busy ? (
        <div className="call-result" role="status" aria-label={`Answer from ${call.to}`}>
          {call.error ? (
            <p className="inline-error">{call.error}</p>
          ) : (
            <>
              <p>
                <strong>{call.to} answered:</strong> {typeof response === 'string' ? response : 'see the result below'}
              </p>
              <details>
                <summary>Full result</summary>
                <JsonBlock value={call.result} label="Result" />
              </details>
            </>
          )}
        </div>
      ) : null}
    </form>
  );
}

function RequestPayment({ peer, others }: { peer: PeerSummary; others: PeerSummary[] }) {
  const id = useId();
  const callPeer = useApp((s) => s.callPeer);
  const navigate = useApp((s) => s.navigate);
  const setFocusWait = useApp((s) => s.setFocusWait);
  const call = useApp((s) => s.peerCalls[`${peer.id}/pay`]);
  const [to, setTo] = useState(others.find((p) => p.status === 'running')?.id ?? others[0]?.id ?? '');
  const [amount, setAmount] = useState('');
  const [currency, setCurrency] = useState('USD');
  const [payee, setPayee] = useState('');
  const [problems, setProblems] = useState<Record<string, string>>({});
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found: Record<string, string> = {};
    const value = Number(amount);
    if (!amount || !Number.isFinite(value) || value <= 0) found.amount = 'An amount greater than 0.';
    if (!/^[A-Z]{3}$/.test(currency)) found.currency = 'A three-letter currency code, e.g. USD.';
    if (!payee.trim()) found.payee = 'Who is to be paid.';
    if (!to) found.to = 'Choose the peer to ask.';
    setProblems(found);
    if (Object.keys(found).length > 0) return;
    void callPeer(peer.id, to, 'pay', { amount: value, currency, payee: payee.trim() });
  };
  const result = call?.result as { status?: string; approval?: string; runId?: string; moved?: boolean } | undefined;
  const unavailable = callUnavailable(peer, 'request a payment');
  const err = (name: string) =>
    problems[name] ? (
      <span className="field-error" id={`${id}-${name}-error`}>
        {problems[name]}
      </span>
    ) : null;
  const described = (name: string) => (problems[name] ? { 'aria-invalid': true, 'aria-describedby': `${id}-${name}-error` } : {});
  return (
    <form className="panel stack" aria-labelledby={`${id}-title`} onSubmit={submit} noValidate>
      <h3 id={`${id}-title`}>Request a payment</h3>
      <p className="muted">The other peer&apos;s <code>pay</code> skill records a payment intent that waits for a person in Approvals. No money moves.</p>
      <div className="field">
        <label htmlFor={`${id}-to`}>To peer</label>
        <OtherPeerSelect id={`${id}-to`} value={to} onChange={setTo} peers={others} />
        {err('to')}
      </div>
      <div className="inline-fields">
        <div className="field">
          <label htmlFor={`${id}-amount`}>Amount</label>
          <input id={`${id}-amount`} inputMode="decimal" value={amount} onChange={(e) => setAmount(e.target.value.trim())} {...described('amount')} />
          {err('amount')}
        </div>
        <div className="field field-narrow">
          <label htmlFor={`${id}-currency`}>Currency</label>
          <input id={`${id}-currency`} value={currency} maxLength={3} onChange={(e) => setCurrency(e.target.value.toUpperCase())} {...described('currency')} />
          {err('currency')}
        </div>
      </div>
      <div className="field">
        <label htmlFor={`${id}-payee`}>Payee</label>
        <input id={`${id}-payee`} value={payee} onChange={(e) => setPayee(e.target.value)} {...described('payee')} />
        {err('payee')}
      </div>
      <UnavailableReason id={`${id}-unavailable`} reason={unavailable} />
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={call?.busy || unavailable !== null} aria-describedby={unavailable ? `${id}-unavailable` : undefined}>
          {call?.busy ? 'Requesting…' : 'Request payment'}
        </button>
      </div>
      {call && !call.busy ? (
        <div className="call-result" role="status" aria-label={`Payment request to ${call.to}`}>
          {call.error ? (
            <p className="inline-error">{call.error}</p>
          ) : result?.approval === PENDING_APPROVAL && result.runId ? (
            <p>
              Waiting for a person: run <code>{result.runId}</code>.{' '}
              <button
                type="button"
                className="link-button"
                onClick={() => {
                  setFocusWait(result.runId!);
                  navigate({ section: 'approvals' });
                }}
              >
                Open it in Approvals
              </button>
            </p>
          ) : (
            <JsonBlock value={call.result} label="Result" />
          )}
        </div>
      ) : null}
    </form>
  );
}

function AllowForm({ peer, others }: { peer: PeerSummary; others: PeerSummary[] }) {
  const id = useId();
  const allowPeer = useApp((s) => s.allowPeer);
  const [caller, setCaller] = useState(others[0]?.id ?? '');
  const [skills, setSkills] = useState('ping, ask');
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const list = skills.split(/[\s,]+/).filter(Boolean);
    if (!caller || list.length === 0) return setMessage({ ok: false, text: 'Choose a caller and at least one skill.' });
    const result = await allowPeer(peer.id, caller, list);
    setMessage(result.ok ? { ok: true, text: `${caller} may now call ${list.join(', ')}.` } : { ok: false, text: result.error.message });
  };
  return (
    <form className="inline-form" aria-label={`Allow a peer to call ${peer.id}`} onSubmit={submit}>
      <div className="field">
        <label htmlFor={`${id}-caller`}>Caller</label>
        <OtherPeerSelect id={`${id}-caller`} value={caller} onChange={setCaller} peers={others} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-skills`}>Skills (comma separated)</label>
        <input id={`${id}-skills`} value={skills} onChange={(e) => setSkills(e.target.value)} />
      </div>
      <button type="submit" className="button small">
        Set allowed skills
      </button>
      {message ? (
        <p className={message.ok ? 'muted' : 'inline-error'} role={message.ok ? 'status' : 'alert'}>
          {message.text}
        </p>
      ) : null}
    </form>
  );
}

export function PeerDetail({ peer }: { peer: PeerSummary }) {
  const peers = useApp((s) => s.peers);
  const section = useRef<HTMLElement>(null);
  useEffect(() => {
    section.current?.scrollIntoView({ block: 'start', behavior: 'smooth' });
  }, [peer.id]);
  const revokePeer = useApp((s) => s.revokePeer);
  const [confirmRevoke, setConfirmRevoke] = useState(false);
  const others = peers.filter((p) => p.id !== peer.id && !p.revoked);
  const status = PEER_STATUS[peer.status];
  const allowed = Object.entries(peer.allow);
  return (
    <section id="peer-detail" ref={section} className="detail" aria-labelledby="peer-detail-title">
      <header className="detail-header">
        <h2 id="peer-detail-title">
          {peer.name} <span className="sub">{peer.id}</span>
        </h2>
        <StatusPill tone={status.tone}>{status.label}</StatusPill>
      </header>
      <div className="detail-grid">
        <div className="panel">
          <h3>Configuration</h3>
          <dl className="facts">
            <dt>Address</dt>
            <dd>
              {peer.address ? (
                <span className="address">
                  <code>{peer.address}</code>
                  <CopyButton value={peer.address} label={`Copy address of ${peer.id}`} />
                </span>
              ) : (
                'not listening'
              )}
            </dd>
            <dt>Port</dt>
            <dd>{peer.port === 0 ? 'any free port' : peer.port}</dd>
            <dt>Public IP</dt>
            <dd>
              <code>{peer.publicIp}</code>
            </dd>
            <dt>Auth</dt>
            <dd>{AUTH_LABELS[peer.auth]}</dd>
            <dt>LLM mode</dt>
            <dd>{peer.llmMode ? 'On: conversations keep context' : 'Off'}</dd>
            <dt>Process</dt>
            <dd>{peer.pid ? `pid ${peer.pid}${peer.startedAt ? `, since ${dateTime(peer.startedAt)}` : ''}` : 'not running'}</dd>
            {peer.error ? (
              <>
                <dt>Last failure</dt>
                <dd className="inline-error">{peer.error}</dd>
              </>
            ) : null}
            <dt>Identity</dt>
            <dd>{peer.revoked ? <StatusPill tone="bad">Revoked: it may call nothing and be called by nobody</StatusPill> : 'Active'}</dd>
          </dl>
          <PeerPing peer={peer} />
          <h3>Who may call it</h3>
          {allowed.length === 0 ? (
            <p className="muted">No peer may call {peer.id} with its identity yet.</p>
          ) : (
            <ul className="plain-list">
              {allowed.map(([caller, skills]) => (
                <li key={caller}>
                  <code>{caller}</code>: {skills.join(', ')}
                </li>
              ))}
            </ul>
          )}
          {others.length > 0 ? <AllowForm peer={peer} others={others} /> : null}
          {!peer.revoked ? (
            <div className="danger-zone">
              {confirmRevoke ? (
                <>
                  <span>Revoke {peer.id}&apos;s identity for good?</span>
                  <button type="button" className="button small danger" onClick={() => void revokePeer(peer.id).then(() => setConfirmRevoke(false))}>
                    Yes, revoke {peer.id}
                  </button>
                  <button type="button" className="button small" onClick={() => setConfirmRevoke(false)}>
                    Keep it
                  </button>
                </>
              ) : (
                <button type="button" className="button small danger" onClick={() => setConfirmRevoke(true)}>
                  Revoke identity…
                </button>
              )}
            </div>
          ) : null}
        </div>
        <SendPrompt peer={peer} others={others} />
        <RequestPayment peer={peer} others={others} />
      </div>
    </section>
  );
}
