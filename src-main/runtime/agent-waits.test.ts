import { describe, expect, it } from 'vitest';
import { ManifestSchema } from './manifest';
import { mayWaitFor, systemPromptsOf } from './agent-waits';

const base = { description: 'x', input: { type: 'object' }, grants: [{ kind: 'model', name: 'local' }] };
const model = (system?: string) => ({ model: { provider: 'local', prompt: 'hi', ...(system ? { system } : {}) } });
const manifest = (extra: Record<string, unknown>) => ManifestSchema.parse({ name: 'a', ...base, steps: [model()], ...extra });

describe('what a manifest says about waiting for a person', () => {
  it('reads nothing from an agent with no approve grant, ceiling, input, payment or delegation', () => {
    expect(mayWaitFor(manifest({}))).toEqual([]);
  });

  it('reads every way an agent may wait: approve grants, oversight, payment, budget ceilings, input, delegation', () => {
    expect(mayWaitFor(manifest({ grants: [{ kind: 'tool', name: 'file.write', approve: true }] }))).toEqual(['approval']);
    expect(mayWaitFor(manifest({ oversight: { approveEveryEffect: true } }))).toEqual(['approval']);
    expect(mayWaitFor(manifest({ steps: [{ pay: { amount: 1, currency: 'USD', payee: 'p' } }], grants: [{ kind: 'payment', name: 'request', approve: true }] }))).toEqual(['payment']);
    expect(mayWaitFor(manifest({ budget: { maxEffects: 9 } }))).toEqual(['budget']);
    expect(mayWaitFor(manifest({ steps: [{ input: { prompt: 'why?' } }] }))).toEqual(['input']);
    for (const grant of [{ kind: 'agent', name: 'b' }, { kind: 'peer', name: 'p', skills: ['s'] }, { kind: 'a2a', name: 'https://x.test/card' }]) {
      expect(mayWaitFor(manifest({ grants: [grant] }))).toEqual(['delegation']);
    }
  });

  it('reads the system prompts of the model steps, verbatim and in order', () => {
    expect(systemPromptsOf(manifest({ steps: [model('first'), model(), model('second')] }))).toEqual(['first', 'second']);
  });
});
