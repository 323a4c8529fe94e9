import { describe, expect, it } from 'vitest';
import { Journal } from '../journal/journal';
import { tempDataDir } from '../../tests/support/journal-support';
import { RunContext, type RunGovernance } from './run-context';
import { readRunHistory } from './run-history';
import { render, TemplateError } from './template';

const governance: RunGovernance = { grants: new Map(), approveEveryEffect: false, haltedBy: () => null, cancelRequested: () => false };

describe('RunContext', () => {
  it('journals now() and random(), and a replay answers them from the record without writing', async () => {
    const journal = await Journal.open({ dataDir: tempDataDir() });
    const runId = 'run-00000000000000000001';
    await journal.append({ runId, kind: 'RunAdmitted', body: { agent: 'a', owner: 'user:local', chain: ['user:local'], input: {}, inputProvenance: 'user:local', budget: {}, trigger: { via: 'cli', by: 'user:local' } } });
    const live = new RunContext(readRunHistory(await journal.readRun(runId, 1, 100)), journal, governance);
    const first = [await live.now(), await live.random(), await live.random()];
    // Local reads are held (nothing outside has seen them) until the run's next durable record.
    expect((await journal.head()).seq).toBe(1);
    await live.commitWith({ runId, kind: 'RunSealed', body: { outcome: 'succeeded', spend: live.spent, records: live.recordCount + 1 } });
    const head = (await journal.head()).seq;
    expect(head).toBe(8);

    const replay = new RunContext(readRunHistory(await journal.readRun(runId, 1, 100)), journal, governance);
    expect([await replay.now(), await replay.random(), await replay.random()]).toEqual(first);
    expect((await journal.head()).seq).toBe(head);
    // A step past the record is live again (held, then committed with the next record).
    await replay.random();
    await replay.commitWith({ runId, kind: 'Cancelled', body: { by: 'user:local' } });
    expect((await journal.head()).seq).toBe(head + 3);
    await journal.close();
  });
});

describe('templates', () => {
  it('renders paths, keeps a lone placeholder\'s type, and refuses a path that does not resolve', () => {
    const scope = { input: { text: 'hi', n: 3, obj: { a: 1 } }, steps: {} };
    expect(render('say {{input.text}} {{ input.n }}', scope)).toBe('say hi 3');
    expect(render('{{input.n}}', scope)).toBe(3);
    expect(render({ a: ['{{input.obj}}'] }, scope)).toEqual({ a: [{ a: 1 }] });
    expect(() => render('{{input.missing}}', scope)).toThrow(TemplateError);
    expect(() => render('{{steps.draft.text}}', scope)).toThrow('{{steps.draft.text}} does not resolve (no "draft")');
    expect(() => render('{{input.constructor}}', scope)).toThrow(TemplateError);
  });
});
