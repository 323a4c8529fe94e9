/**
 * `journal export --out FILE` never replaces a file that is there unless told to: an earlier
 * bundle may be the evidence someone still needs. The CLI as a real process (its TypeScript
 * entry through tsx), on a data dir with one run of the bundled `summarize` agent.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { runCliFromSource } from '../../tests/support/cli-from-source';

describe('journal export --out', () => {
  it('refuses an existing file, naming it and --force; --force replaces it with a bundle that verifies', { timeout: 120_000 }, async () => {
    const dataDir = tempDataDir('ap-cli-export-');
    const d = ['--data-dir', dataDir];
    expect((await runCliFromSource(['run', 'summarize', '--input', '{"text":"Keep me. Twice."}', '--wait', ...d])).code).toBe(0);
    const out = join(dataDir, 'bundle.jsonl');
    writeFileSync(out, 'an earlier bundle\n');

    const refused = await runCliFromSource(['journal', 'export', '--out', out, ...d]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(`agentplane: ${out} exists; give --force to overwrite it, or another --out`);
    expect(readFileSync(out, 'utf8')).toBe('an earlier bundle\n');

    const forced = await runCliFromSource(['journal', 'export', '--out', out, '--force', ...d]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/^exported \d+ records to /);
    const verified = await runCliFromSource(['journal', 'verify', out]);
    expect(verified.stdout).toMatch(/^OK \d+ records, root [0-9a-f]{64}$/m);
  });
});
