import { spawn, type ChildProcess } from 'node:child_process';

// An ACP agent's process: started with pipes for the protocol, the tail of what it writes to
// stderr and how it ended kept for the sentence a failure is told with, and stopped politely
// (SIGTERM), then firmly (SIGKILL) if it lingers.

/** The process an agent spec starts (its own home, the endpoint variables). */
export interface AcpLaunch {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

const STDERR_CHARS = 2000;
const STOP_GRACE_MS = 3000;

export class AgentProcess {
  private tail = '';
  private ended?: string;

  private constructor(readonly child: ChildProcess) {
    child.stderr!.on('data', (data: Buffer) => (this.tail = (this.tail + data.toString('utf8')).slice(-STDERR_CHARS)));
    child.once('exit', (code, signal) => (this.ended = signal ? `stopped by ${signal}` : `exited with code ${code}`));
  }

  /** Resolves once the process runs; rejects, naming the agent and its command, when it cannot start. */
  static async start(name: string, launch: AcpLaunch): Promise<AgentProcess> {
    const child = spawn(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, stdio: ['pipe', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err) => reject(new Error(`${name} could not start (${launch.command}): ${err.message}`)));
    });
    return new AgentProcess(child);
  }

  /** How it ended and its last lines on stderr, for an error's sentence ("" when there is nothing to say). */
  detail(): string {
    const said = this.tail.trim().split('\n').slice(-3).join(' | ');
    return [this.ended, said && `it said: ${said}`].filter(Boolean).join('; ');
  }

  async stop(): Promise<void> {
    const { child } = this;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }
}
