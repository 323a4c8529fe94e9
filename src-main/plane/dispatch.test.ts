import { describe, expect, it, vi } from 'vitest';
import { commandNames } from '../../src-shared/ipc/contract';
import { dispatchCommand, type CommandHandlers } from './dispatch';
import { PlaneError } from '../base/plane-error';
import { createPlane } from './plane';
import { tempDataDir } from '../../tests/support/journal-support';
import { call } from '../../tests/support/runtime-support';

const status = {
  version: '1.0.0',
  dataDir: '/d',
  journal: '/d/journal.sqlite',
  startedAt: new Date(0).toISOString(),
  uptimeMs: 5,
  host: 'headless' as const,
  state: 'running' as const,
};

function handlers(overrides: Partial<CommandHandlers> = {}): CommandHandlers {
  const notUnderTest = Object.fromEntries(
    commandNames.map((name) => [
      name,
      () => {
        throw new Error(`${name} is not under test here`);
      },
    ]),
  ) as unknown as CommandHandlers;
  return {
    ...notUnderTest,
    'plane.status': () => status,
    'peers.list': () => ({ peers: [] }),
    'journal.changes': () => ({ journalId: 'j', head: 0, runs: [], truncated: false }),
    'journal.runs': () => ({ runs: [] }),
    'journal.records': () => ({ records: [], nextSeq: null, headSeq: 0 }),
    'journal.verify': () => ({ ok: true, count: 0, root: '', checkpointSize: 0, unsigned: 0, unknownKinds: 0 }),
    ...overrides,
  };
}

describe('dispatchCommand', () => {
  it('runs a known command with a valid request', async () => {
    const result = await dispatchCommand(handlers(), 'plane.status', {}, { transport: 'local' }, () => undefined);
    expect(result).toEqual({ ok: true, value: status });
  });

  it('treats a missing request as {}', async () => {
    const result = await dispatchCommand(handlers(), 'peers.list', undefined, { transport: 'local' }, () => undefined);
    expect(result).toEqual({ ok: true, value: { peers: [] } });
  });

  it('refuses unknown names without calling anything, and does not echo huge names', async () => {
    const result = await dispatchCommand(handlers(), 'x'.repeat(500), {}, { transport: 'local' }, () => undefined);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe('AP_UNKNOWN_COMMAND');
      expect(result.error.message.length).toBeLessThan(120);
    }
    const proto = await dispatchCommand(handlers(), '__proto__', {}, { transport: 'local' }, () => undefined);
    expect(proto.ok).toBe(false);
  });

  it('names the failing field of a bad request and never calls the handler', async () => {
    const records = vi.fn();
    const result = await dispatchCommand(
      handlers({ 'journal.records': records }),
      'journal.records',
      { runId: 3, fromSeq: 'a' },
      { transport: 'local' },
      () => undefined,
    );
    expect(records).not.toHaveBeenCalled();
    expect(result).toMatchObject({ ok: false, error: { code: 'AP_BAD_REQUEST' } });
    if (!result.ok) {
      expect(result.error.message).toContain('runId');
      expect(result.error.message).toContain('fromSeq');
    }
  });

  it('passes a PlaneError through as its code and message', async () => {
    const result = await dispatchCommand(
      handlers({
        'peers.list': () => {
          throw new PlaneError('AP_CONFLICT', 'peer is starting');
        },
      }),
      'peers.list',
      {},
      { transport: 'local' },
      () => undefined,
    );
    expect(result).toEqual({ ok: false, error: { code: 'AP_CONFLICT', message: 'peer is starting' } });
  });

  it('turns any other failure into AP_INTERNAL with a fixed sentence, logging the detail', async () => {
    const log = vi.fn();
    const result = await dispatchCommand(
      handlers({
        'plane.status': async () => {
          throw new Error('secret detail /home/x/token=abc');
        },
      }),
      'plane.status',
      {},
      { transport: 'web' },
      log,
    );
    expect(result).toEqual({ ok: false, error: { code: 'AP_INTERNAL', message: "plane.status failed inside the plane; the plane's log has the detail" } });
    expect(log).toHaveBeenCalledWith('plane.status', expect.any(Error));
  });
});

describe('createPlane', () => {
  it('reports status with uptime from its clock and publishes status changes', async () => {
    let now = 1_000_000;
    const plane = await createPlane({ dataDir: tempDataDir(), version: '2.0.0', host: 'headless', now: () => now });
    now += 1500;
    expect(plane.status()).toMatchObject({ version: '2.0.0', uptimeMs: 1500, state: 'running', startedAt: new Date(1_000_000).toISOString() });
    const seen: string[] = [];
    plane.events.subscribe((e) => seen.push(`${e.name}:${(e.payload as { state: string }).state}`));
    await plane.close();
    await plane.close();
    expect(seen).toEqual(['plane.statusChanged:stopping']);
    expect(await call(plane, 'plane.status', {})).toMatchObject({ state: 'stopping' });
  });
});
