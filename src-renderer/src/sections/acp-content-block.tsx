/** One ACP content block as shown: text as text (never markup), anything else as a labelled stand-in. */
import type { ContentView } from '../../../src-shared/protocol/acp/session-view';
import { StatusPill } from '../components/status-pill';
import { count } from '../lib/display-format';

export function ContentBlock({ block }: { block: ContentView }) {
  if (block.type === 'text') return <p className="acp-text">{block.text}</p>;
  return (
    <p className="acp-attachment">
      <StatusPill tone="plain">{block.type.replace('_', ' ')}</StatusPill> {block.label}
      {block.size !== undefined ? ` · ${count(block.size)} bytes` : ''}
      {block.digest ? <span className="sub mono">sha-256 {block.digest}</span> : null}
    </p>
  );
}
