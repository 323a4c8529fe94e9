/**
 * An MCP call's record in the inspector, read for a person: the server, the tool and the
 * arguments of its EffectStarted; the tool's text of its EffectDone (labelled with where it came
 * from: untrusted, as everything a server returns). The canonical JSON stays right below it.
 */
import type { RecordView } from '../../../src-shared/ipc/contract';
import { JsonBlock } from '../components/json-block';
import { mcpResultText, mcpServerOfProvenance, readMcpCall } from '../lib/mcp-call';

export function McpRecordDetails({ record }: { record: RecordView }) {
  const body = record.body;
  if (record.kind === 'EffectStarted') {
    const call = readMcpCall(body.effect, body.request);
    if (!call) return null;
    return (
      <section aria-label="MCP call">
        <dl className="facts">
          <dt>MCP server</dt>
          <dd>
            <code>{call.server}</code>
            {typeof body.destination === 'string' ? <span className="muted"> ({body.destination})</span> : null}
          </dd>
          <dt>Tool</dt>
          <dd>
            <code>{call.tool}</code>
          </dd>
        </dl>
        <JsonBlock value={call.arguments} label="Arguments" />
      </section>
    );
  }
  if (record.kind === 'EffectDone') {
    const server = mcpServerOfProvenance(body.provenance);
    const text = server === null ? null : mcpResultText(body.result);
    if (server === null || text === null) return null;
    return (
      <section aria-label="MCP result">
        <JsonBlock text={text} label={`Result from ${server} (untrusted)`} />
      </section>
    );
  }
  return null;
}
