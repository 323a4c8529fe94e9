/**
 * `agentplane providers list|set|remove|test`: the model providers' settings, as the Settings
 * view shows them (plane/provider-settings.ts keeps them; the AGENTPLANE_* variables win).
 * Like every command they go through the running plane, or open the data dir in-process when
 * none runs (plane-connection.ts); a change is in force at the plane's next admission.
 *
 * A key is read from stdin only (`--key-stdin`): a key in argv is visible to every user of the
 * machine in `ps` and stays in the shell's history, so `--key` is refused with how to do it
 * instead. On a terminal the key is read without echo. Nothing here prints a key: views carry at
 * most its last four characters.
 */
import type { Command } from 'commander';
import type { ProviderView, ProvidersList, SettableProvider } from '../../src-shared/protocol/providers';
import { SETTABLE_PROVIDERS } from '../../src-shared/protocol/providers';
import { runAndPrint, type OutputOptions } from './plane-connection';
import { CliError, jsonFailure } from './cli-error';
import { ErrorCode } from '../../src-shared/ipc/errors';

const out = (line: string) => process.stdout.write(`${line}\n`);
/** Far above any key; stops a mistaken `< big-file` from being read whole. */
const MAX_STDIN_BYTES = 64 * 1024;

function providerOf(value: string): SettableProvider {
  const known = SETTABLE_PROVIDERS.find((id) => id === value);
  if (!known) throw new CliError(`unknown provider ${value.slice(0, 40)}: one of ${SETTABLE_PROVIDERS.join(', ')}`);
  return known;
}

/** `value (env NAME)` or `value (settings)`. */
function sourced(value: string, source: ProviderView['keySource'], variable: string): string {
  return source === 'env' ? `${value} (env ${variable})` : `${value} (settings)`;
}

function printProvider(view: ProviderView): void {
  const key = view.keySet ? sourced(`key ${view.keyHint ?? 'set'}`, view.keySource, view.variables.apiKey) : 'no key';
  const base = view.baseUrl ? sourced(view.baseUrl, view.baseUrlSource, view.variables.baseUrl) : 'default URL';
  const model = view.model ? sourced(`model ${view.model}`, view.modelSource, view.variables.model) : 'no default model';
  out(`${view.id}  ${view.configured ? 'configured' : 'not configured'}  ${key}  ${base}  ${model}`);
}

function printList(list: ProvidersList): void {
  for (const view of list.providers) printProvider(view);
  out(`stored in ${list.file} (${list.sealed ? 'keys sealed with the OS keychain' : 'a 0600 file'}); AGENTPLANE_* variables win over it`);
  if (list.error) out(`not in force: ${list.error}`);
}

/** Reads the key: piped, the whole of stdin; on a terminal, one line without echo. Trimmed. */
async function readKey(stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (stdin.isTTY) return readHiddenLine(stdin);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_STDIN_BYTES) throw new CliError(`--key-stdin: more than ${MAX_STDIN_BYTES / 1024} KiB on stdin; expected one key`);
    chunks.push(buffer);
  }
  const key = Buffer.concat(chunks).toString('utf8').trim();
  if (!key) throw new CliError('--key-stdin: stdin was empty; pipe the key in (e.g. `pass show anthropic | agentplane providers set anthropic --key-stdin`)');
  return key;
}

function readHiddenLine(stdin: NodeJS.ReadStream): Promise<string> {
  process.stderr.write('key (not shown): ');
  return new Promise((resolve, reject) => {
    let typed = '';
    const finish = (error: Error | null) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(typed.trim());
    };
    const onData = (data: Buffer) => {
      for (const char of data.toString('utf8')) {
        if (char === '\r' || char === '\n') return finish(null);
        if (char === '\u0003') return finish(new CliError('cancelled'));
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else typed += char;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}

interface SetFlags extends OutputOptions {
  keyStdin?: boolean;
  key?: string;
  baseUrl?: string;
  clearBaseUrl?: boolean;
  model?: string;
  clearModel?: boolean;
}

/** A usage mistake as the one failure shape: JSON with --json, else thrown for runCli to print. */
function usageFailure(flags: OutputOptions, error: unknown): void {
  if (!(flags.json && error instanceof CliError)) throw error;
  out(jsonFailure(ErrorCode.BadRequest, error.message));
  process.exitCode = 1;
}

/** The provider an argument names; null (the failure already printed) when it names none. */
function namedProvider(name: string, flags: OutputOptions): SettableProvider | null {
  try {
    return providerOf(name);
  } catch (error) {
    usageFailure(flags, error);
    return null;
  }
}

export function addProviderCommands(program: Command): void {
  const providers = program.command('providers').description(`model providers (${SETTABLE_PROVIDERS.join(', ')}): keys, base URLs and default models, and a connection test`);
  providers
    .command('list')
    .description('each provider: configured or not, and where its key, base URL and model come from (never the key)')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions) => runAndPrint(options, out, (p) => p.call('providers.list', {}), printList));
  providers
    .command('set')
    .argument('<provider>', SETTABLE_PROVIDERS.join(' | '))
    .description('store a provider\'s key (from stdin), base URL or default model; in force at the next run, no restart')
    .option('--key-stdin', 'read the key from stdin (piped, or typed without echo)')
    .option('--key <key>', 'refused: a key in the command line is visible in `ps`; use --key-stdin')
    .option('--base-url <url>', 'the provider\'s base URL (http or https)')
    .option('--clear-base-url', 'forget the stored base URL (back to the driver\'s default)')
    .option('--model <model>', 'the default model for steps that name none')
    .option('--clear-model', 'forget the stored default model')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action(async (name: string, flags: SetFlags) => {
      let request: { provider: SettableProvider; apiKey?: string; baseUrl?: string | null; model?: string | null };
      try {
        if (flags.key !== undefined) {
          throw new CliError('--key is refused: a key on the command line is visible to every user in `ps` and stays in shell history (treat that one as exposed). Pipe it instead: `… | agentplane providers set <provider> --key-stdin`');
        }
        if (flags.baseUrl !== undefined && flags.clearBaseUrl) throw new CliError('give --base-url or --clear-base-url, not both');
        if (flags.model !== undefined && flags.clearModel) throw new CliError('give --model or --clear-model, not both');
        const provider = providerOf(name);
        if (!flags.keyStdin && flags.baseUrl === undefined && !flags.clearBaseUrl && flags.model === undefined && !flags.clearModel) {
          throw new CliError('nothing to set: give --key-stdin, --base-url, --model (or --clear-base-url, --clear-model)');
        }
        request = {
          provider,
          ...(flags.keyStdin ? { apiKey: await readKey() } : {}),
          ...(flags.baseUrl !== undefined ? { baseUrl: flags.baseUrl } : flags.clearBaseUrl ? { baseUrl: null } : {}),
          ...(flags.model !== undefined ? { model: flags.model } : flags.clearModel ? { model: null } : {}),
        };
      } catch (error) {
        usageFailure(flags, error);
        return;
      }
      return runAndPrint(flags, out, (p) => p.call('providers.set', request), (view) => {
        printProvider(view);
        const shadowed = (['keySource', 'baseUrlSource', 'modelSource'] as const).filter((field) => view[field] === 'env');
        if (shadowed.length > 0) out(`note: the environment's value is in force for ${shadowed.map((f) => f.replace('Source', '')).join(', ')} (variables win over settings)`);
      });
    });
  providers
    .command('remove')
    .argument('<provider>', SETTABLE_PROVIDERS.join(' | '))
    .description('forget what was stored for a provider (its AGENTPLANE_* variables, if any, stay in force)')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((name: string, options: OutputOptions) => {
      const provider = namedProvider(name, options);
      if (provider === null) return;
      return runAndPrint(options, out, (p) => p.call('providers.remove', { provider }), ({ removed, provider: view }) => {
        out(removed ? `removed the stored settings of ${provider}` : `nothing was stored for ${provider}`);
        printProvider(view);
      });
    });
  providers
    .command('test')
    .argument('<provider>', SETTABLE_PROVIDERS.join(' | '))
    .description('one tiny real call (a one-word prompt, a few tokens; not journaled): the latency, or the provider\'s own error')
    .option('--model <model>', 'the model to call (default: the provider\'s default model)')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((name: string, options: OutputOptions & { model?: string }) => {
      const provider = namedProvider(name, options);
      if (provider === null) return;
      return runAndPrint(
        options,
        out,
        (p) => p.call('providers.test', { provider, ...(options.model !== undefined ? { model: options.model } : {}) }),
        (result) => {
          if (result.ok) out(`${provider}: ok, ${result.model} answered in ${result.latencyMs} ms`);
        },
        { failureOf: (result) => (result.ok ? null : { code: ErrorCode.Unavailable, message: result.error }) },
      );
    });
}
