import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtinTools, workspacePath } from './tools';
import { EffectFailure } from './run-signals';

describe('workspace tools', () => {
  const root = mkdtempSync(join(tmpdir(), 'ap-ws-'));
  const workspace = join(root, 'workspace');

  it('writes and reads inside the workspace', async () => {
    const write = builtinTools.get('file.write')!;
    const result = await write.run({ path: 'notes/a.md', content: 'hello' }, { workspace });
    expect(result.result).toEqual({ path: join('notes', 'a.md'), bytes: 5 });
    expect(readFileSync(join(workspace, 'notes', 'a.md'), 'utf8')).toBe('hello');
    const read = await builtinTools.get('file.read')!.run({ path: 'notes/a.md' }, { workspace });
    expect(read.result).toMatchObject({ content: 'hello' });
  });

  for (const path of ['../escape.txt', 'notes/../../escape.txt', '/etc/passwd', '..\\escape.txt', 'a\0b', '', 'C:\\x', '.']) {
    it(`refuses the path ${JSON.stringify(path)} and writes nothing outside`, async () => {
      expect(() => workspacePath(workspace, path)).toThrow(EffectFailure);
      await expect(builtinTools.get('file.write')!.run({ path, content: 'x' }, { workspace })).rejects.toMatchObject({ disposition: 'DidNotHappen' });
      expect(existsSync(join(root, 'escape.txt'))).toBe(false);
    });
  }
});
