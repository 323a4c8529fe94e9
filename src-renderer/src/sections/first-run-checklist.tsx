/**
 * First-run guidance on the Peers view while the data dir has no runs yet: the four steps that
 * show what the plane does, each a button that takes the step. A step is ticked when the store
 * shows it happened (the demo peers running, a prompt answered, a payment waiting or decided,
 * a run in the journal); the list goes once the journal holds a run, or when hidden.
 */
import { useState } from 'react';
import { useApp } from '../store/store-context';

const DEMO = ['alpha', 'beta'] as const;

export function FirstRunChecklist() {
  const peers = useApp((s) => s.peers);
  const runsLoaded = useApp((s) => s.runsLoaded);
  const runCount = useApp((s) => Object.keys(s.runs).length);
  const asked = useApp((s) => Object.entries(s.peerCalls).some(([key, call]) => key.endsWith('/ask') && call?.result !== undefined));
  const paid = useApp((s) => Object.entries(s.peerCalls).some(([key, call]) => key.endsWith('/pay') && call?.result !== undefined));
  const peerAction = useApp((s) => s.peerAction);
  const navigate = useApp((s) => s.navigate);
  const [hidden, setHidden] = useState(false);
  const demo = DEMO.map((id) => peers.find((p) => p.id === id));
  if (hidden || !runsLoaded || runCount > 0 || demo.some((p) => p === undefined)) return null;
  const running = demo.every((p) => p?.status === 'running');
  const steps = [
    {
      text: 'Start the demo peers',
      done: running,
      action: 'Start alpha and beta',
      run: () => {
        for (const p of demo) if (p && p.status !== 'running' && p.status !== 'starting') void peerAction(p.id, 'start');
      },
    },
    { text: 'Send a prompt from alpha to beta', done: asked, action: 'Open alpha', run: () => navigate({ section: 'peers', peerId: 'alpha' }) },
    { text: 'Approve a payment', done: false, action: paid ? 'Open Approvals' : 'Request a payment', run: () => navigate(paid ? { section: 'approvals' } : { section: 'peers', peerId: 'alpha' }) },
    { text: "Open the run's journal", done: false, action: 'Open Runs', run: () => navigate({ section: 'runs' }) },
  ];
  return (
    <section className="panel stack" aria-labelledby="first-run-title">
      <h2 id="first-run-title">Getting started</h2>
      <ol className="stack">
        {steps.map((step) => (
          <li key={step.text}>
            {step.text}
            {step.done ? ' — done' : ''}{' '}
            <button type="button" className="button small" onClick={step.run}>
              {step.action}
            </button>
          </li>
        ))}
      </ol>
      <div>
        <button type="button" className="button small ghost" onClick={() => setHidden(true)}>
          Hide this list
        </button>
      </div>
    </section>
  );
}
