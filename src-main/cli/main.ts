/** Entry point of the `agentplane` command (built to out/main/cli.js; see bin/agentplane.js). */
import { startupMark } from '../base/startup-trace';
import { runCli } from './program';

// Every static import above has been evaluated by now: this mark is Node's boot plus module load.
startupMark('cli.modules-loaded');
void runCli(process.argv);
