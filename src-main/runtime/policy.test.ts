import { describe, expect, it } from 'vitest';
import { DelegationError, extendChain, grantsBeyond, MAX_CHAIN_DEPTH, PolicyEngine } from './policy';

describe('policy', () => {
  const engine = PolicyEngine.parse(
    {
      rules: [
        { effect: 'allow', principal: 'user:*', action: 'runtime:run.start', resource: 'agent:*' },
        { effect: 'deny', principal: 'user:mallory', action: '*', resource: '*' },
        { effect: 'allow', principal: 'peer:reviewer', action: 'mcpv2:skill.call', resource: 'skill:ask' },
      ],
    },
    'policy.json',
  );

  it('allows what a rule allows and denies what none does', () => {
    expect(engine.decide('user:local', 'runtime:run.start', 'agent:summarize')).toMatchObject({ allowed: true, rule: 0 });
    expect(engine.decide('peer:reviewer', 'mcpv2:skill.call', 'skill:ask')).toMatchObject({ allowed: true, rule: 2 });
    expect(engine.decide('peer:reviewer', 'mcpv2:skill.call', 'skill:pay')).toMatchObject({ allowed: false, rule: null });
    expect(engine.decide('peer:other', 'mcpv2:skill.call', 'skill:ask').allowed).toBe(false);
  });

  it('a deny beats any allow', () => {
    expect(engine.decide('user:mallory', 'runtime:run.start', 'agent:summarize')).toMatchObject({ allowed: false, rule: 1 });
  });

  it('patterns are anchored globs, not regular expressions', () => {
    const strict = PolicyEngine.parse({ rules: [{ effect: 'allow', principal: 'user:a.b', action: 'x', resource: 'y' }] }, 'p');
    expect(strict.decide('user:aXb', 'x', 'y').allowed).toBe(false);
    expect(strict.decide('user:a.b', 'x', 'y').allowed).toBe(true);
    expect(strict.decide('user:a.bc', 'x', 'y').allowed).toBe(false);
  });

  it('refuses a malformed policy file, naming the field', () => {
    expect(() => PolicyEngine.parse({ rules: [{ effect: 'maybe', principal: 'x', action: 'y', resource: 'z' }] }, 'policy.json')).toThrow(/policy\.json: rules\.0\.effect/);
  });
});

describe('delegation', () => {
  it('extends a chain by one link, capping its depth', () => {
    let chain = ['user:local'];
    for (let i = 1; i < MAX_CHAIN_DEPTH; i++) chain = extendChain(chain, `peer:p${i}`);
    expect(chain).toHaveLength(MAX_CHAIN_DEPTH);
    expect(() => extendChain(chain, 'peer:one-too-many')).toThrow(DelegationError);
    expect(() => extendChain([], 'peer:x')).toThrow(/acting for nobody/);
  });

  it('names grants wider than an authority instead of clipping them', () => {
    expect(grantsBeyond(['model:*', 'tool:echo'], ['model:local', 'tool:echo', 'tool:file.write'])).toEqual(['tool:file.write']);
    expect(grantsBeyond([], ['model:local'])).toEqual(['model:local']);
  });
});
