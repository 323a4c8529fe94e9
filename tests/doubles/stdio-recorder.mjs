// A transparent stdio recorder: `node stdio-recorder.mjs --in FILE --out FILE -- <command…>` runs
// the command and relays its stdin and stdout unchanged, appending every byte that went in to
// --in and every byte that came out to --out. Put between the tap and a real agent, it records
// exactly what the agent received and sent, for comparison with what the editor sent and got.
import { appendFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';

const args = process.argv.slice(2);
const separator = args.indexOf('--');
const flag = (name) => {
  const i = args.indexOf(name);
  if (i === -1 || i > separator) throw new Error(`stdio-recorder needs ${name}`);
  return args[i + 1];
};
const inFile = flag('--in');
const outFile = flag('--out');
const [command, ...rest] = args.slice(separator + 1);
writeFileSync(inFile, '');
writeFileSync(outFile, '');
const child = spawn(command, rest, { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.on('data', (chunk) => {
  appendFileSync(inFile, chunk);
  child.stdin.write(chunk);
});
process.stdin.on('end', () => child.stdin.end());
child.stdin.on('error', () => undefined);
child.stdout.on('data', (chunk) => {
  appendFileSync(outFile, chunk);
  process.stdout.write(chunk);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
