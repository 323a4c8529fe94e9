/** What a section shows when there is nothing in it yet: a sentence saying what will appear. */
export function EmptyState({ text }: { text: string }) {
  return (
    <div className="empty-state">
      <p>{text}</p>
    </div>
  );
}
