/**
 * How a CLI command reaches a plane. DESIGN.md: one data dir, one plane. When a plane is
 * running for the data dir (its plane.json names a live pid), the command goes through that
 * plane's local API with its token, so a run suspended in the desktop app is approved from a
 * terminal and continues there. When none is running, the command opens the data dir itself:
 * it becomes the plane for as long as it runs (runs it admits execute in this process, and runs
 * left running by a stopped plane are resumed), then closes it, signing a final checkpoint.
 */
import { request } from 'undici';
import type { CommandName, CommandRequest, CommandResponse } from '../../src-shared/ipc/contract';
import type { Result } from '../../src-shared/ipc/result';
import { appVersion, resolveDataDir } from '../plane/app-paths';
import { createLogger } from '../plane/logger';
import { createPlane, type Plane } from '../plane/plane';
import { readPlaneFile } from '../plane/plane-file';
import { join } from 'node:path';
import { CliError } from './cli-error';

export interface PlaneConnection {
  readonly via: 'running plane' | 'data dir';
  call<K extends CommandName>(command: K, req: CommandRequest<K>): Promise<CommandResponse<K>>;
  close(): Promise<void>;
}

/** A failure the plane answered: shown as `agentplane: <message>` (or as JSON with --json). */
export class CommandFailed extends CliError {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function unwrap<T>(result: Result<unknown>): T {
  if (result.ok) return result.value as T;
  throw new CommandFailed(result.error.code, result.error.message);
}

export async function connect(dataDirFlag: string | undefined): Promise<PlaneConnection> {
  const dataDir = resolveDataDir(dataDirFlag);
  const running = readPlaneFile(dataDir);
  if (running) {
    return {
      via: 'running plane',
      async call(command, req) {
        let response;
        try {
          response = await request(`${running.url}/api/commands/${command}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${running.token}`, 'content-type': 'application/json' },
            body: JSON.stringify(req ?? {}),
            headersTimeout: 600_000,
            bodyTimeout: 600_000,
          });
        } catch (error) {
          throw new CliError(`the plane for ${dataDir} (pid ${running.pid}) did not answer at ${running.url}: ${(error as Error).message}`);
        }
        return unwrap(await response.body.json() as Result<unknown>);
      },
      close: async () => undefined,
    };
  }
  let plane: Plane;
  try {
    plane = await createPlane({ dataDir, version: appVersion(), host: 'headless', logger: createLogger(join(dataDir, 'plane.log'), () => undefined) });
  } catch (error) {
    throw new CliError(`cannot open the plane in ${dataDir}: ${(error as Error).message}`);
  }
  return {
    via: 'data dir',
    async call(command, req) {
      return unwrap(await plane.dispatch(command, req, { transport: 'local' }));
    },
    close: () => plane.close(),
  };
}

export async function withPlane<T>(dataDirFlag: string | undefined, use: (plane: PlaneConnection) => Promise<T>): Promise<T> {
  const plane = await connect(dataDirFlag);
  try {
    return await use(plane);
  } finally {
    await plane.close();
  }
}

export interface OutputOptions {
  dataDir?: string;
  json?: boolean;
}

/**
 * Runs one command against the plane and prints its result: for a person through `print`, or
 * with `--json` as one JSON document. With `--json`, a failure is one JSON document too
 * (`{"ok":false,"error":{code,message}}`, exit code 1): the plane's refusal carries its code, a
 * usage mistake caught in the CLI is a bad request.
 */
export async function runAndPrint<T>(options: OutputOptions, out: (line: string) => void, work: (plane: PlaneConnection) => Promise<T>, print: (value: T) => void): Promise<void> {
  try {
    const value = await withPlane(options.dataDir, work);
    if (options.json) out(JSON.stringify(value));
    else print(value);
  } catch (error) {
    if (options.json && error instanceof CliError) {
      const code = error instanceof CommandFailed ? error.code : 'AP_BAD_REQUEST';
      out(JSON.stringify({ ok: false, error: { code, message: error.message } }));
      process.exitCode = 1;
      return;
    }
    throw error;
  }
}
