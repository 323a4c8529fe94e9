/**
 * A2A push notification configs and their delivery cursors, kept in `<dir>/a2a-push.json` (0600,
 * replaced atomically on every change): `<dir>` is the data dir for the plane's endpoint and the
 * peer's own folder for a peer's port (plane/a2a-push-wiring.ts), one file per process, since the
 * whole file is replaced from memory on each write. A small file rather than journal records: a
 * config carries the receiver's token and credentials, and secrets never go in the journal; and
 * the cursor changes on every delivered event, which is bookkeeping, not history worth signing.
 *
 * The cursor is what makes delivery survive a restart: it names the last task state delivered
 * (`sentKey`, with the journal seq it was read at) and whether the output artifact went out.
 * It is written after the receiver's 2xx, so a crash between the POST and the write re-sends
 * that one event, with the same event id (a2a-push.ts) for the receiver to drop.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { readRegularFile, writePrivateFileAtomically } from '../../base/private-files';

/** The spec leaves the bound to the server; this plane keeps at most this many per task. */
export const MAX_PUSH_CONFIGS_PER_TASK = 10;

const StoredConfigSchema = z.object({
  id: z.string().min(1).max(200),
  taskId: z.string().min(1),
  owner: z.string().min(1),
  url: z.string().url(),
  token: z.string().max(4096).optional(),
  authentication: z.object({ scheme: z.string().min(1).max(100), credentials: z.string().max(8192) }).optional(),
  createdAt: z.string(),
  cursor: z.object({ seq: z.number().int().min(0), sentKey: z.string(), artifactSent: z.boolean(), done: z.boolean() }),
});
export type StoredPushConfig = z.infer<typeof StoredConfigSchema>;
const FileSchema = z.object({ configs: z.array(StoredConfigSchema) });

/** `dir`: the data dir (the plane's store) or a peer's own folder (that peer's store). */
export function pushStorePath(dir: string): string {
  return join(dir, 'a2a-push.json');
}

export class PushStore {
  private configs: StoredPushConfig[] = [];
  readonly file: string;

  constructor(dir: string) {
    this.file = pushStorePath(dir);
    const text = readRegularFile(this.file);
    if (text !== null && text.trim() !== '') {
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (error) {
        throw new Error(`${this.file}: not valid JSON (${(error as Error).message}); fix or remove it (removing forgets every push config)`);
      }
      const parsed = FileSchema.safeParse(json);
      // A broken file is refused loudly rather than read as empty: an empty read would forget
      // every cursor, and a restart must neither lose nor double an event.
      if (!parsed.success) throw new Error(`${this.file}: not a push config file (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? ''})`);
      this.configs = parsed.data.configs;
    }
  }

  private save(): void {
    writePrivateFileAtomically(this.file, `${JSON.stringify({ configs: this.configs })}\n`);
  }

  forTask(taskId: string): StoredPushConfig[] {
    return this.configs.filter((c) => c.taskId === taskId);
  }

  get(taskId: string, id: string): StoredPushConfig | undefined {
    return this.configs.find((c) => c.taskId === taskId && c.id === id);
  }

  /** Configs with events still to deliver. */
  pending(): StoredPushConfig[] {
    return this.configs.filter((c) => !c.cursor.done);
  }

  /** Adds (or replaces, same task and id) a config; refuses the 11th of a task. */
  put(input: Omit<StoredPushConfig, 'id' | 'createdAt' | 'cursor'> & { id?: string }): StoredPushConfig {
    const id = input.id && input.id.length > 0 ? input.id : randomUUID();
    const existing = this.get(input.taskId, id);
    if (!existing && this.forTask(input.taskId).length >= MAX_PUSH_CONFIGS_PER_TASK) {
      throw new RangeError(`task ${input.taskId} already has ${MAX_PUSH_CONFIGS_PER_TASK} push notification configs, the most this plane keeps per task; delete one first`);
    }
    const config: StoredPushConfig = {
      ...input,
      id,
      createdAt: existing?.createdAt ?? new Date().toISOString(),
      // Replacing a config keeps its cursor: the receiver has what was sent already.
      cursor: existing?.cursor ?? { seq: 0, sentKey: '', artifactSent: false, done: false },
    };
    this.configs = [...this.configs.filter((c) => c !== existing), config];
    this.save();
    return config;
  }

  delete(taskId: string, id: string): boolean {
    const before = this.configs.length;
    this.configs = this.configs.filter((c) => !(c.taskId === taskId && c.id === id));
    if (this.configs.length === before) return false;
    this.save();
    return true;
  }

  /** Advances a config's cursor durably (after the receiver's 2xx). A deleted config stays deleted. */
  advance(taskId: string, id: string, cursor: StoredPushConfig['cursor']): void {
    const config = this.get(taskId, id);
    if (!config) return;
    config.cursor = cursor;
    this.save();
  }
}
