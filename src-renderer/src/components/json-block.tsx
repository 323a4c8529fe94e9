/** JSON shown for reading (indented), with a copy button; `canonical` shows one exact line instead. */
import { prettyJson } from '../lib/display-format';
import { CopyButton } from './copy-button';

export function JsonBlock({ value, label, text }: { value?: unknown; label: string; text?: string }) {
  const shown = text ?? prettyJson(value);
  return (
    <div className="json-block">
      <div className="json-block-bar">
        <span className="json-block-label">{label}</span>
        <CopyButton value={shown} label={`Copy ${label.toLowerCase()}`} />
      </div>
      {/* Focusable so a long block scrolls from the keyboard; a region so that focus has a name. */}
      <pre tabIndex={0} role="region" aria-label={label}>
        {shown}
      </pre>
    </div>
  );
}
