/**
 * How a CLI command reaches a plane. DESIGN.md: one data dir, one plane. When a plane is
 * running for the data dir (its plane.json names a live pid), the command goes through that
 * plane's local API with its token, so a run suspended in the desktop app is approved from a
 * terminal and continues there. When none is running, the command opens the data dir itself:
 * it becomes the plane for as long as it runs (runs it admits execute in this process, and runs
 * left running by a stopped plane are resumed), then closes it, signing a final checkpoint.
 *
 * A plane.json that no plane wrote (a link, not ours, not 0600, or naming a URL off loopback)
 * is an error, not a reason to open the data dir instead: it means someone could write where
 * only the user should, and either outcome of guessing is wrong. Trusting it sends them the
 * bridge token and believes their answers; ignoring it may open the data dir beside a plane
 * that is really running (two planes on one data dir). The person is told, and decides.
 *
 * Either way the command goes through the contract client (src-shared/ipc/client.ts), the one
 * door every caller uses: over HTTP to the running plane, or over an in-process linked pair to
 * the plane this command opened. Every reply is checked against the contract's response schema
 * for the command sent; a reply of any other shape is an error naming the command, never a
 * value handed on to crash the printer later.
 */
import { join } from 'node:path';
import { createPlaneClient, type PlaneClient } from '../../src-shared/ipc/client';
import type { CommandName, CommandRequest, CommandResponse } from '../../src-shared/ipc/contract';
import { appVersion, resolveDataDir } from '../base/app-paths';
import { UnsafeDataDirError } from '../base/data-dir-guard';
import { createLogger } from '../base/logger';
import { createPlane, type Plane } from '../plane/plane';
import { readTrustedPlaneFile, UntrustedPlaneFileError, type PlaneFile } from '../plane/plane-file';
import { inProcessTransport } from '../plane/serve-contract';
import { CliError } from './cli-error';
import { createHttpTransport } from './http-transport';

export interface PlaneConnection {
  readonly via: 'running plane' | 'data dir';
  /** The contract client itself, for callers that follow events. */
  readonly client: PlaneClient;
  /** Runs one command; a refusal (or an answer outside the contract) throws CommandFailed. */
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

/** A refusal about where the CLI would act (the data dir, plane.json), with its stable code. */
function refusedPlace(error: unknown): never {
  if (error instanceof UnsafeDataDirError || error instanceof UntrustedPlaneFileError) throw new CommandFailed(error.code, error.message);
  throw error;
}

function connection(via: PlaneConnection['via'], client: PlaneClient, close: () => Promise<void>): PlaneConnection {
  return {
    via,
    client,
    async call(command, req) {
      const result = await client.tryCall(command, req);
      if (result.ok) return result.value;
      throw new CommandFailed(result.error.code, result.error.message);
    },
    close,
  };
}

export async function connect(dataDirFlag: string | undefined): Promise<PlaneConnection> {
  let dataDir: string;
  let running: PlaneFile | null;
  try {
    dataDir = resolveDataDir(dataDirFlag);
    running = readTrustedPlaneFile(dataDir);
  } catch (error) {
    refusedPlace(error);
  }
  if (running) {
    const transport = createHttpTransport({ url: running.url, token: running.token, name: `the plane for ${dataDir} (pid ${running.pid})` });
    return connection('running plane', createPlaneClient(transport), async () => undefined);
  }
  let plane: Plane;
  try {
    plane = await createPlane({ dataDir, version: appVersion(), host: 'headless', logger: createLogger(join(dataDir, 'plane.log'), () => undefined) });
  } catch (error) {
    throw new CliError(`cannot open the plane in ${dataDir}: ${(error as Error).message}`);
  }
  return connection('data dir', createPlaneClient(inProcessTransport(plane)), () => plane.close());
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
