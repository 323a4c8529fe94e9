/**
 * What a section shows when there is nothing in it yet: a sentence saying what will appear and,
 * where one click fills it, the button for that action ("Run write-note").
 */
export function EmptyState({ text, action }: { text: string; action?: { label: string; onClick(): void } }) {
  return (
    <div className="empty-state">
      <p>{text}</p>
      {action ? (
        <button type="button" className="button primary" onClick={action.onClick}>
          {action.label}
        </button>
      ) : null}
    </div>
  );
}
