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
 * Every reply from a running plane is checked against the contract's response schema for the
 * command sent (as the renderer's client does, src-shared/ipc/client.ts): a reply of any other
 * shape is an error naming the command, never a value handed on to crash the printer later.
 */
import { request } from 'undici';
import { commands, type CommandName, type CommandRequest, type CommandResponse } from '../../src-shared/ipc/contract';
import { describeZodError, ErrorCode } from '../../src-shared/ipc/errors';
import { FailureSchema, resultSchemaOf, type Result } from '../../src-shared/ipc/result';
import { appVersion, resolveDataDir } from '../base/app-paths';
import { UnsafeDataDirError } from '../base/data-dir-guard';
import { createLogger } from '../base/logger';
import { createPlane, type Plane } from '../plane/plane';
import { readTrustedPlaneFile, UntrustedPlaneFileError, type PlaneFile } from '../plane/plane-file';
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

/** A refusal about where the CLI would act (the data dir, plane.json), with its stable code. */
function refusedPlace(error: unknown): never {
  if (error instanceof UnsafeDataDirError || error instanceof UntrustedPlaneFileError) throw new CommandFailed(error.code, error.message);
  throw error;
}

/** The reply to `command` as the contract says it must be, or a CommandFailed naming the command. */
function checkedReply<K extends CommandName>(command: K, running: PlaneFile, status: number, text: string): CommandResponse<K> {
  const mismatch = (why: string) =>
    new CommandFailed(ErrorCode.Internal, `the plane at ${running.url} answered ${command} with a reply that does not match the contract (HTTP ${status}: ${why}); not using it`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw mismatch('the body is not JSON');
  }
  const parsed = resultSchemaOf(commands[command].response).safeParse(json);
  if (parsed.success) return unwrap<CommandResponse<K>>(parsed.data as Result<unknown>);
  // A refusal in the contract's shape is reported as the plane's refusal, with its code.
  const failure = FailureSchema.safeParse(json);
  if (failure.success) return unwrap<CommandResponse<K>>(failure.data);
  throw mismatch(describeZodError(parsed.error));
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
    return {
      via: 'running plane',
      async call(command, req) {
        let status: number;
        let text: string;
        try {
          const response = await request(`${running.url}/api/commands/${command}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${running.token}`, 'content-type': 'application/json' },
            body: JSON.stringify(req ?? {}),
            headersTimeout: 600_000,
            bodyTimeout: 600_000,
          });
          status = response.statusCode;
          text = await response.body.text();
        } catch (error) {
          throw new CliError(`the plane for ${dataDir} (pid ${running.pid}) did not answer at ${running.url}: ${(error as Error).message}`);
        }
        return checkedReply(command, running, status, text);
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
