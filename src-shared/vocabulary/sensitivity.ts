/**
 * Sensitivity labels and egress ceilings (docs/GOVERNED-RUNTIME.md, "Sensitivity"). The operator
 * orders a set of labels, lowest first (`public < internal < confidential < secret` unless
 * `<data dir>/sensitivity.json` says otherwise). A value's label is the highest label of every
 * source it was made from (the join), because a text made from a secret is as secret as what it
 * was made from. Every agent and every destination has a ceiling: the highest label its operator
 * agreed may leave to it; an effect whose request carries a value above it is refused before it
 * is sent, since a refusal after sending protects nothing.
 *
 * With no configuration every ceiling is the highest label and every result the lowest, which is
 * the behaviour before labels existed: nothing is refused.
 */

/** The labels when the operator configures none, lowest first. */
export const DEFAULT_LABELS: readonly string[] = ['public', 'internal', 'confidential', 'secret'];

/** The failure code of an effect refused because its request is above a ceiling. */
export const SENSITIVITY_CEILING = 'SensitivityCeiling';

/** What a destination's entry may say: the ceiling of what may leave to it, and the label of what comes back. */
export interface DestinationLabels {
  ceiling?: string;
  result?: string;
}

/** The operator's configuration, as `<data dir>/sensitivity.json` holds it (every part optional). */
export interface SensitivityConfig {
  /** The labels, lowest first, each once. */
  labels?: string[];
  /** An agent's ceiling, by agent name. */
  agents?: Record<string, string>;
  /**
   * A destination's ceiling and result label, by the label its answers carry (`model:local`,
   * `peer:beta`, `mcp:files`, `a2a:<card>`, `agent:<name>`, `tool:file.read`, `push:<origin>`) or a pattern
   * ending in `*` (`peer:*`); the exact name first, then the longest pattern.
   */
  destinations?: Record<string, DestinationLabels>;
}

export class SensitivityConfigError extends Error {
  override readonly name = 'SensitivityConfigError';
}

const LABEL = /^[a-z][a-z0-9-]*$/;
const DESTINATION = /^(\*|[a-z0-9]+:[^\s]*)$/;

/** A label's value with the place it came from (a scope path, or an effect's answer): why a request carries it. */
export interface Labelled {
  label: string;
  /** Where the value holding this label was read from (`input`, `steps.quote.response`); empty for the lowest. */
  from: string[];
}

/** The ordered labels and the ceilings, validated; every lookup answers a label of the set. */
export class Sensitivity {
  readonly labels: readonly string[];
  private readonly agents: ReadonlyMap<string, string>;
  private readonly destinations: ReadonlyMap<string, DestinationLabels>;

  private constructor(config: Required<SensitivityConfig>) {
    this.labels = config.labels;
    this.agents = new Map(Object.entries(config.agents));
    this.destinations = new Map(Object.entries(config.destinations));
  }

  /** Validates a configuration, naming what is wrong and where (`source`: the file, for the message). */
  static parse(raw: unknown, source = 'sensitivity'): Sensitivity {
    const fail = (what: string): never => {
      throw new SensitivityConfigError(`${source}: ${what}`);
    };
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail('must be an object with labels, agents and destinations');
    const config = raw as Record<string, unknown>;
    for (const key of Object.keys(config)) if (!['labels', 'agents', 'destinations'].includes(key)) fail(`${key} is not a setting (the settings are labels, agents, destinations)`);
    const labels = config.labels ?? DEFAULT_LABELS;
    if (!Array.isArray(labels) || labels.length === 0) fail('labels must be a list of labels, lowest first, e.g. ["public", "internal", "confidential", "secret"]');
    const seen = new Set<string>();
    for (const [i, label] of (labels as unknown[]).entries()) {
      if (typeof label !== 'string' || !LABEL.test(label)) fail(`labels.${i}: ${JSON.stringify(label)} is not a label (lowercase letters, digits and dashes)`);
      if (seen.has(label as string)) fail(`labels.${i}: ${String(label)} appears twice; the labels are an order, lowest first, each once`);
      seen.add(label as string);
    }
    const known = (label: unknown, at: string): string => {
      if (typeof label !== 'string' || !seen.has(label)) fail(`${at}: ${JSON.stringify(label)} is not a configured label (the labels are ${[...seen].join(' < ')})`);
      return label as string;
    };
    const mapping = (value: unknown, at: string): Record<string, unknown> => {
      if (value === undefined) return {};
      if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(`${at} must be an object`);
      return value as Record<string, unknown>;
    };
    const agents: Record<string, string> = {};
    for (const [name, label] of Object.entries(mapping(config.agents, 'agents'))) agents[name] = known(label, `agents.${name}`);
    const destinations: Record<string, DestinationLabels> = {};
    for (const [name, entry] of Object.entries(mapping(config.destinations, 'destinations'))) {
      if (!DESTINATION.test(name)) fail(`destinations.${name}: not a destination (kind:name, e.g. model:local, peer:beta, mcp:files, a2a:<card>, or a pattern like peer:*)`);
      const fields = mapping(entry, `destinations.${name}`);
      for (const key of Object.keys(fields)) if (key !== 'ceiling' && key !== 'result') fail(`destinations.${name}.${key} is not a setting (a destination has ceiling and result)`);
      destinations[name] = {
        ...(fields.ceiling !== undefined ? { ceiling: known(fields.ceiling, `destinations.${name}.ceiling`) } : {}),
        ...(fields.result !== undefined ? { result: known(fields.result, `destinations.${name}.result`) } : {}),
      };
    }
    return new Sensitivity({ labels: labels as string[], agents, destinations });
  }

  /** No configuration: the default labels, every ceiling the highest, every result the lowest. */
  static defaults(): Sensitivity {
    return Sensitivity.parse({});
  }

  get lowest(): string {
    return this.labels[0]!;
  }

  get highest(): string {
    return this.labels.at(-1)!;
  }

  isLabel(label: string): boolean {
    return this.labels.includes(label);
  }

  /**
   * A label's place in the order. A label this configuration does not hold (a journal written
   * under another one) ranks above every label: what it meant is unknown, so it is kept in.
   */
  rank(label: string): number {
    const at = this.labels.indexOf(label);
    return at === -1 ? this.labels.length : at;
  }

  /** The join: the higher of the two, and where it came from (both places when they are equal). */
  join(a: Labelled, b: Labelled): Labelled {
    const ra = this.rank(a.label);
    const rb = this.rank(b.label);
    if (ra !== rb) return ra > rb ? a : b;
    return { label: a.label, from: [...new Set([...a.from, ...b.from])] };
  }

  /** The lowest label, from nowhere: a literal's. */
  bottom(): Labelled {
    return { label: this.lowest, from: [] };
  }

  private entryOf(destination: string, field: keyof DestinationLabels): string | undefined {
    const exact = this.destinations.get(destination)?.[field];
    if (exact !== undefined) return exact;
    let best: { length: number; label: string } | undefined;
    for (const [pattern, entry] of this.destinations) {
      const label = entry[field];
      if (label === undefined || !pattern.endsWith('*') || !destination.startsWith(pattern.slice(0, -1))) continue;
      if (!best || pattern.length > best.length) best = { length: pattern.length, label };
    }
    return best?.label;
  }

  /** The most sensitive label that may leave to `destination`: the highest unless configured. */
  ceilingOf(destination: string): string {
    return this.entryOf(destination, 'ceiling') ?? this.highest;
  }

  /** The label of what `destination` answers: the lowest unless configured. */
  resultOf(destination: string): string {
    return this.entryOf(destination, 'result') ?? this.lowest;
  }

  /** The most sensitive label an agent's runs may send anywhere: the highest unless configured. */
  agentCeiling(agent: string): string {
    return this.agents.get(agent) ?? this.highest;
  }

  /** The first label among `held` above `destination`'s ceiling, with that ceiling; null when every one is within it. */
  firstAbove(held: readonly HeldLabel[], destination: string): (HeldLabel & { ceiling: string }) | null {
    const ceiling = this.ceilingOf(destination);
    const above = held.find((l) => this.rank(l.label) > this.rank(ceiling));
    return above ? { ...above, ceiling } : null;
  }
}

/** A label a run's records hold, and where (`its input`, `the answer at step 2`). */
export interface HeldLabel {
  label: string;
  at: string;
}

/**
 * The labels a run's records hold: its input's, and each answer's (EffectDone, a fork's
 * EffectReused steps). What crosses to a reader of the whole run (a run resource, a push
 * receiver of its task) must be bounded by these without reading the values themselves.
 */
export function labelsHeld(records: ReadonlyArray<{ kind: string; body: unknown }>): HeldLabel[] {
  const found: HeldLabel[] = [];
  for (const record of records) {
    const body = (record.body ?? {}) as { inputSensitivity?: unknown; sensitivity?: unknown; step?: unknown; steps?: unknown };
    if (record.kind === 'RunAdmitted' && typeof body.inputSensitivity === 'string') found.push({ label: body.inputSensitivity, at: 'its input' });
    if (record.kind === 'EffectDone' && typeof body.sensitivity === 'string') found.push({ label: body.sensitivity, at: `the answer at step ${String(body.step)}` });
    if (record.kind === 'EffectReused' && Array.isArray(body.steps)) {
      for (const step of body.steps as Array<{ step?: unknown; sensitivity?: unknown }>) if (typeof step.sensitivity === 'string') found.push({ label: step.sensitivity, at: `the answer at step ${String(step.step)}` });
    }
  }
  return found;
}
