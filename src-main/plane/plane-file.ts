/**
 * One data dir, one plane. The running plane writes `plane.json` in its data dir saying where
 * its local API listens (and with which token, which is why the file is 0600 in a 0700 folder);
 * CLI commands read it to act through the running plane instead of opening the data dir a
 * second time. A file left by a plane that died is detected by its pid and ignored.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

export const PlaneFileSchema = z.object({
  pid: z.number().int().positive(),
  url: z.string(),
  port: z.number().int().positive(),
  token: z.string(),
  startedAt: z.string(),
});
export type PlaneFile = z.infer<typeof PlaneFileSchema>;

export function planeFilePath(dataDir: string): string {
  return join(dataDir, 'plane.json');
}

export function writePlaneFile(dataDir: string, info: PlaneFile): void {
  writeFileSync(planeFilePath(dataDir), `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
}

export function removePlaneFile(dataDir: string, pid = process.pid): void {
  const current = readPlaneFile(dataDir);
  if (current && current.pid === pid) rmSync(planeFilePath(dataDir), { force: true });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The running plane for this data dir, or null (no file, a malformed one, or a dead pid). */
export function readPlaneFile(dataDir: string): PlaneFile | null {
  let raw: string;
  try {
    raw = readFileSync(planeFilePath(dataDir), 'utf8');
  } catch {
    return null;
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return null;
  }
  const parsed = PlaneFileSchema.safeParse(json);
  if (!parsed.success || !processAlive(parsed.data.pid)) return null;
  return parsed.data;
}
