/**
 * How a CLI command reaches a plane. docs/DESIGN.md: one data dir, one plane. When a plane is
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
import { ErrorCode } from '../../src-shared/ipc/errors';
import { appVersion, resolveDataDir } from '../base/app-paths';
import { UnsafeDataDirError } from '../base/data-dir-guard';
import type { Plane } from '../plane/plane';
import { readTrustedPlaneFile, UntrustedPlaneFileError, type PlaneFile } from '../plane/plane-file';
import { CliError, CommandFailed, jsonFailure } from './cli-error';
import { createHttpTransport } from './http-transport';

export interface PlaneConnection {
  readonly via: 'running plane' | 'data dir';
  /** The contract client itself, for callers that follow events. */
  readonly client: PlaneClient;
  /** Runs one command; a refusal (or an answer outside the contract) throws CommandFailed. */
  call<K extends CommandName>(command: K, req: CommandRequest<K>): Promise<CommandResponse<K>>;
  close(): Promise<void>;
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

export interface ConnectOptions {
  /**
   * The command means nothing without a plane that outlives it (a peer started by this process
   * would die when the command exits): with no plane running, refuse rather than open the data
   * dir in-process.
   */
  needsRunningPlane?: boolean;
}

/** The refusal of a command that needs a live plane when none is running for the data dir. */
export function noPlaneRunning(dataDir: string): CommandFailed {
  return new CommandFailed(ErrorCode.Unavailable, `no plane is running for ${dataDir}: start one with \`agentplane serve\``);
}

export async function connect(dataDirFlag: string | undefined, options: ConnectOptions = {}): Promise<PlaneConnection> {
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
  if (options.needsRunningPlane) throw noPlaneRunning(dataDir);
  // The plane's code is loaded only on this path: a command answered by a running plane (most
  // are) never loads it, which is most of a CLI call's start-up.
  const [{ createPlane }, { createLogger }, { PlaneRunningError }, { inProcessTransport }] = await Promise.all([
    import('../plane/plane'),
    import('../base/logger'),
    import('../plane/plane-lock'),
    import('../plane/serve-contract'),
  ]);
  let plane: Plane;
  try {
    plane = await createPlane({
      dataDir,
      version: appVersion(),
      host: 'headless',
      logger: createLogger(join(dataDir, 'plane.log'), () => undefined),
      // A new data dir gets the demo peers whichever command opens it first, as `serve` does.
      demoPeers: process.env.AGENTPLANE_DEMO_PEERS !== '0',
    });
  } catch (error) {
    // A plane started between reading plane.json and opening the data dir holds its lock.
    if (error instanceof PlaneRunningError) throw new CommandFailed(error.code, error.message);
    throw new CliError(`cannot open the plane in ${dataDir}: ${(error as Error).message}`);
  }
  return connection('data dir', createPlaneClient(inProcessTransport(plane)), () => plane.close());
}

export async function withPlane<T>(dataDirFlag: string | undefined, use: (plane: PlaneConnection) => Promise<T>, options: ConnectOptions = {}): Promise<T> {
  const plane = await connect(dataDirFlag, options);
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

/** How a result the plane returned can still be a failure for the person (a run that ended failed). */
export interface PrintOptions<T> extends ConnectOptions {
  failureOf?: (value: T) => { code: string; message: string } | null;
  /**
   * The exit code of a result that is no failure but not a plain success either (`run --wait`
   * leaving a run waiting for a person: 3); 0 or absent for a success. The output is the
   * success's (`{"ok":true,…}` under --json).
   */
  exitCodeOf?: (value: T) => number;
}

/**
 * Runs one command against the plane and prints its result: for a person through `print`, or
 * with `--json` as one JSON document, `{"ok":true,"result":…}`. A failure is exit code 1 and,
 * with `--json`, `{"ok":false,"error":{code,message}}`: the plane's refusal carries its code, a
 * usage mistake caught in the CLI is a bad request, and a result `failureOf` judges a failure
 * (a run that ended failed, denied or cancelled) carries the code it names. Without `--json`
 * such a result is still printed in full, then the failure is one line on stderr.
 */
export async function runAndPrint<T>(options: OutputOptions, out: (line: string) => void, work: (plane: PlaneConnection) => Promise<T>, print: (value: T) => void, printOptions: PrintOptions<T> = {}): Promise<void> {
  try {
    const value = await withPlane(options.dataDir, work, printOptions);
    const failure = printOptions.failureOf?.(value) ?? null;
    if (options.json) out(failure ? jsonFailure(failure.code, failure.message) : JSON.stringify({ ok: true, result: value }));
    else {
      print(value);
      if (failure) process.stderr.write(`agentplane: ${failure.message}\n`);
    }
    if (failure) process.exitCode = 1;
    else {
      const code = printOptions.exitCodeOf?.(value) ?? 0;
      if (code !== 0) process.exitCode = code;
    }
  } catch (error) {
    if (options.json && error instanceof CliError) {
      const code = error instanceof CommandFailed ? error.code : ErrorCode.BadRequest;
      out(jsonFailure(code, error.message));
      process.exitCode = 1;
      return;
    }
    throw error;
  }
}
