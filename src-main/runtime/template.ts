/**
 * `{{path}}` templates for manifest steps: `{{input.text}}`, `{{steps.draft.text}}`. A path
 * that resolves to a string is inserted as is, anything else as JSON; a path that resolves to
 * nothing is an error naming it, never an empty string (a prompt that silently lost its
 * subject would be a run that quietly did something else). A value that is exactly one
 * placeholder keeps its type (`"{{input.amount}}"` stays a number).
 */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}

const PLACEHOLDER = /\{\{\s*([a-zA-Z_][\w-]*(?:\.[\w-]+)*)\s*\}\}/g;

function lookup(scope: Record<string, unknown>, path: string): unknown {
  let value: unknown = scope;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, part)) {
      throw new TemplateError(`{{${path}}} does not resolve (no "${part}")`);
    }
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * `reads`, when given, collects every scope path the template read (`steps.quote.amount`), in
 * order: what a rendered value was made from, for its provenance (step-runner.ts).
 */
export function render(template: unknown, scope: Record<string, unknown>, reads?: string[]): unknown {
  const read = (path: string) => {
    const value = lookup(scope, path);
    reads?.push(path);
    return value;
  };
  if (typeof template === 'string') {
    const whole = /^\{\{\s*([a-zA-Z_][\w-]*(?:\.[\w-]+)*)\s*\}\}$/.exec(template);
    if (whole) return read(whole[1]!);
    return template.replace(PLACEHOLDER, (_m, path: string) => {
      const value = read(path);
      return typeof value === 'string' ? value : JSON.stringify(value);
    });
  }
  if (Array.isArray(template)) return template.map((item) => render(item, scope, reads));
  if (template !== null && typeof template === 'object') {
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, render(v, scope, reads)]));
  }
  return template;
}
