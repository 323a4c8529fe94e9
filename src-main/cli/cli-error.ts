/** A failure the CLI reports as one line on stderr and exit code 1, without a stack. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
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

/** The one JSON document of a failure, for `--json` (commander's usage errors use it too). */
export function jsonFailure(code: string, message: string): string {
  return JSON.stringify({ ok: false, error: { code, message } });
}
