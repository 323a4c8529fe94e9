import { describe, expect, it } from 'vitest';
import { formatRoute, parseRoute, sameView } from './route';

const RUN = `run-${'c'.repeat(20)}`;

describe('hash routes', () => {
  it('an editor session has its own address, and a reload returns to it', () => {
    expect(parseRoute(`#/acp/${RUN}`)).toEqual({ section: 'acp', runId: RUN, seq: null, peerId: null });
    expect(formatRoute({ section: 'acp', runId: RUN, seq: null, peerId: null })).toBe(`#/acp/${RUN}`);
    expect(parseRoute('#/acp')).toEqual({ section: 'acp', runId: null, seq: null, peerId: null });
    expect(parseRoute('#/acp/not-a-run')).toEqual({ section: 'acp', runId: null, seq: null, peerId: null });
  });

  it('runs keep theirs', () => {
    expect(parseRoute(`#/runs/${RUN}/7`)).toEqual({ section: 'runs', runId: RUN, seq: 7, peerId: null });
    expect(formatRoute(parseRoute(`#/runs/${RUN}/7`))).toBe(`#/runs/${RUN}/7`);
  });

  it('a comparison of two runs has its own address, and a reload returns to it', () => {
    const other = `run-${'d'.repeat(20)}`;
    const route = parseRoute(`#/runs/${RUN}/diff/${other}`);
    expect(route).toEqual({ section: 'runs', runId: RUN, seq: null, peerId: null, compareWith: other });
    expect(formatRoute(route)).toBe(`#/runs/${RUN}/diff/${other}`);
    // The timeline's address is unchanged by the comparison's existence.
    expect(parseRoute(`#/runs/${RUN}/7`)).not.toHaveProperty('compareWith');
    expect(parseRoute(`#/runs/${RUN}/diff`)).toEqual({ section: 'runs', runId: RUN, seq: null, peerId: null });
    expect(sameView(route, parseRoute(`#/runs/${RUN}`))).toBe(false);
    expect(sameView(parseRoute(`#/runs/${RUN}/3`), parseRoute(`#/runs/${RUN}/7`))).toBe(true);
  });

  it('a malformed escape in the address opens the default view instead of stopping the page', () => {
    expect(parseRoute('#/runs/%E0%A4%A')).toEqual({ section: 'peers', runId: null, seq: null, peerId: null });
    expect(parseRoute('#/%')).toEqual({ section: 'peers', runId: null, seq: null, peerId: null });
  });
});
