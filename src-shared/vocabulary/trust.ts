/**
 * Whose word a provenance label is (docs/GOVERNED-RUNTIME.md, "Provenance at protected sinks"):
 * the operator's, the plane's, or an outside party's. Apart from provenance.ts (the grants'
 * protect rules and their schemas) because the page's first load reads only this: the Approvals
 * card and the timeline say whether a value is trusted.
 */

/** The trust class of the manifest's literals and of what a person at this plane supplied. */
export const OPERATOR = 'operator';
/** The trust class, and the label, of what the plane made itself. */
export const PLANE = 'plane';

/** The trust class of a provenance label: `operator`, `plane`, or null (untrusted). */
export function trustClass(provenance: string): typeof OPERATOR | typeof PLANE | null {
  if (provenance === OPERATOR || provenance.startsWith('user:') || provenance.startsWith('person:')) return OPERATOR;
  if (provenance === PLANE) return PLANE;
  return null;
}
