/**
 * The controls for an object schema's fields (lib/schema-form.ts says which kinds): one labelled
 * control each, its description as the hint, its error beside it. Nested objects are a fieldset.
 */
import { fieldKind, type JsonSchema } from '../lib/schema-form';

interface Props {
  idBase: string;
  schema: JsonSchema;
  value: Record<string, unknown>;
  errors: Record<string, string>;
  path?: string;
  onChange(value: Record<string, unknown>): void;
}

export function SchemaFields({ idBase, schema, value, errors, path = '', onChange }: Props) {
  const required = new Set(schema.required ?? []);
  return (
    <>
      {Object.entries(schema.properties ?? {}).map(([name, p]) => {
        const at = path ? `${path}.${name}` : name;
        const id = `${idBase}-${at.replace(/\W/g, '_')}`;
        const kind = fieldKind(p);
        const set = (v: unknown) => {
          const next = { ...value };
          if (v === undefined) delete next[name];
          else next[name] = v;
          onChange(next);
        };
        const error = errors[at];
        const hintId = p.description ? `${id}-hint` : undefined;
        const describedBy = [error ? `${id}-error` : null, hintId].filter(Boolean).join(' ') || undefined;
        const common = { id, 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy, 'data-field': at };
        const title = `${p.title ?? name}${required.has(name) ? '' : ' (optional)'}`;
        const hint = p.description ? (
          <span className="field-hint" id={hintId}>
            {p.description}
          </span>
        ) : null;
        const errorText = error ? (
          <span className="field-error" id={`${id}-error`}>
            {error}
          </span>
        ) : null;
        if (kind === 'object') {
          return (
            <fieldset key={at} className="field field-wide">
              <legend>{title}</legend>
              {hint}
              <SchemaFields idBase={idBase} schema={p} value={(value[name] ?? {}) as Record<string, unknown>} errors={errors} path={at} onChange={set} />
            </fieldset>
          );
        }
        if (kind === 'boolean') {
          return (
            <div key={at} className="field">
              <label className="choice">
                <input type="checkbox" {...common} checked={value[name] === true} onChange={(e) => set(e.target.checked)} />
                {title}
              </label>
              {hint}
              {errorText}
            </div>
          );
        }
        let control;
        if (kind === 'enum') {
          control = (
            <select {...common} value={typeof value[name] === 'string' ? (value[name] as string) : ''} onChange={(e) => set(e.target.value === '' ? undefined : e.target.value)}>
              {required.has(name) ? null : <option value="">(none)</option>}
              {p.enum!.map((option) => (
                <option key={String(option)} value={String(option)}>
                  {String(option)}
                </option>
              ))}
            </select>
          );
        } else if (kind === 'number' || kind === 'integer') {
          const v = value[name];
          control = (
            <input
              {...common}
              inputMode={kind === 'integer' ? 'numeric' : 'decimal'}
              value={v === undefined ? '' : String(v)}
              onChange={(e) => {
                // Kept as typed until it reads as a number, so "1." or "-" can be finished.
                const text = e.target.value.trim();
                const n = Number(text);
                set(text === '' ? undefined : Number.isFinite(n) && /\d$/.test(text) ? n : text);
              }}
            />
          );
        } else if (kind === 'strings') {
          const items = Array.isArray(value[name]) ? (value[name] as string[]) : [];
          control = (
            <textarea
              {...common}
              rows={3}
              value={items.join('\n')}
              onChange={(e) => set(e.target.value === '' ? [] : e.target.value.split('\n'))}
            />
          );
        } else {
          control = <input {...common} value={typeof value[name] === 'string' ? (value[name] as string) : ''} onChange={(e) => set(e.target.value === '' ? undefined : e.target.value)} />;
        }
        return (
          <div key={at} className="field">
            <label htmlFor={id}>
              {title}
              {kind === 'strings' ? ' (one per line)' : ''}
            </label>
            {control}
            {hint}
            {errorText}
          </div>
        );
      })}
    </>
  );
}
