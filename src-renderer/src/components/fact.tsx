/** One labelled value in an inline list of facts (`<dl>`): the pair wraps as a unit. */
export function Fact({ label, children, title }: { label: string; children: React.ReactNode; title?: string }) {
  return (
    <div className="fact">
      <dt>{label}</dt>
      <dd title={title}>{children}</dd>
    </div>
  );
}
