/** Entry point of the `agentplane` command (built to out/main/cli.js; see bin/agentplane.js). */
import { runCli } from './program';

void runCli(process.argv);
