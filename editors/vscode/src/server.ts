/**
 * Which language server to start. The extension carries the server's Python code (pip
 * installed into `bundled/libs` when it is packaged), so all it needs is a Python 3.11 or
 * newer. In order: `glassllm.server.path` (an external `glassllm-lsp`), then
 * `glassllm.server.python`, then the Python extension's interpreter, then `python3` and
 * `python` on the PATH. A setting the user wrote is used as written: when it does not work
 * the search stops there, since falling through would run something the user did not ask
 * for. Kept apart from the VS Code API so Node tests cover the order and the report.
 */
import { execFile } from 'node:child_process';
import { Language, MESSAGES } from './messages';

export const MINIMUM: readonly [number, number] = [3, 11];

/** A Python to try: where it comes from (for the report) and how to run it. */
export interface Candidate {
  source: 'setting' | 'pythonExtension' | 'path';
  command: string;
}

/** What trying one candidate found: its version, or why it could not be run. */
export type Probe = { version: [number, number] } | { problem: 'notFound' | 'failed'; detail: string };

export interface Tried {
  candidate: Candidate;
  probe: Probe;
}

export type Found =
  | { kind: 'external'; command: string }
  | { kind: 'python'; command: string; version: [number, number]; tried: Tried[] }
  | { kind: 'none'; tried: Tried[]; setting: 'glassllm.server.path' | 'glassllm.server.python' };

const VERSION_SCRIPT = 'import sys; print(*sys.version_info[:2])';
const PROBE_TIMEOUT_MS = 15_000;

/** Runs `command -c ...` and reads its major and minor version. */
export function probePython(command: string, env: NodeJS.ProcessEnv = process.env): Promise<Probe> {
  return new Promise((resolve) => {
    execFile(command, ['-c', VERSION_SCRIPT], { env, timeout: PROBE_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error) {
        const code = (error as NodeJS.ErrnoException).code;
        const notFound = code === 'ENOENT' || code === 'EACCES';
        resolve({ problem: notFound ? 'notFound' : 'failed', detail: (stderr || error.message).trim() });
        return;
      }
      const match = /^(\d+) (\d+)\s*$/.exec(stdout);
      resolve(
        match
          ? { version: [Number(match[1]), Number(match[2])] }
          : { problem: 'failed', detail: `unexpected output: ${stdout.trim()}` },
      );
    });
  });
}

/** Runs `command --version`: all an external server has to show to be worth starting. */
export function probeExecutable(command: string, env: NodeJS.ProcessEnv = process.env): Promise<Probe | undefined> {
  return new Promise((resolve) => {
    execFile(command, ['--version'], { env, timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
      if (!error) {
        resolve(undefined);
        return;
      }
      const code = (error as NodeJS.ErrnoException).code;
      const notFound = code === 'ENOENT' || code === 'EACCES';
      resolve({ problem: notFound ? 'notFound' : 'failed', detail: (stderr || error.message).trim() });
    });
  });
}

export function fits(probe: Probe): probe is { version: [number, number] } {
  return 'version' in probe && (probe.version[0] > MINIMUM[0] || (probe.version[0] === MINIMUM[0] && probe.version[1] >= MINIMUM[1]));
}

export interface Choices {
  serverPath: string;
  serverPython: string;
  /** The Python extension's interpreter: undefined when that extension is not installed. */
  pythonExtension: () => Promise<string | undefined>;
}

/** Goes through the choices in order and returns the first server that can run. */
export async function findServer(
  choices: Choices,
  probe: (command: string) => Promise<Probe> = probePython,
  probeExternal: (command: string) => Promise<Probe | undefined> = probeExecutable,
): Promise<Found> {
  if (choices.serverPath) {
    const problem = await probeExternal(choices.serverPath);
    if (problem === undefined) {
      return { kind: 'external', command: choices.serverPath };
    }
    return { kind: 'none', setting: 'glassllm.server.path', tried: [{ candidate: { source: 'setting', command: choices.serverPath }, probe: problem }] };
  }
  const tried: Tried[] = [];
  const attempt = async (candidate: Candidate): Promise<Found | undefined> => {
    const result = await probe(candidate.command);
    tried.push({ candidate, probe: result });
    return fits(result) ? { kind: 'python', command: candidate.command, version: result.version, tried } : undefined;
  };
  if (choices.serverPython) {
    return (
      (await attempt({ source: 'setting', command: choices.serverPython })) ?? {
        kind: 'none',
        setting: 'glassllm.server.python',
        tried,
      }
    );
  }
  const selected = await choices.pythonExtension();
  const candidates: Candidate[] = [
    ...(selected ? [{ source: 'pythonExtension' as const, command: selected }] : []),
    { source: 'path', command: 'python3' },
    { source: 'path', command: 'python' },
  ];
  for (const candidate of candidates) {
    const found = await attempt(candidate);
    if (found) {
      return found;
    }
  }
  return { kind: 'none', setting: 'glassllm.server.python', tried };
}

/** "python3 is 3.9; python: not found", in the user's language, for the message that none fits. */
export function describeTried(tried: readonly Tried[], language: Language, setting?: string): string {
  const words = MESSAGES[language];
  return tried
    .map(({ candidate, probe }) => {
      const name =
        candidate.source === 'setting'
          ? words.triedSetting(setting ?? 'glassllm.server.python', candidate.command)
          : candidate.source === 'pythonExtension'
            ? words.triedPythonExtension(candidate.command)
            : candidate.command;
      if ('version' in probe) {
        return `${name} ${words.isVersion(probe.version.join('.'))}`;
      }
      return `${name}: ${probe.problem === 'notFound' ? words.notFound : words.failed}`;
    })
    .join('; ');
}

/** The one message shown when no server can be started (`found.kind === 'none'`). */
export function noServerMessage(found: Extract<Found, { kind: 'none' }>, language: Language): string {
  const words = MESSAGES[language];
  const tried = describeTried(found.tried, language, found.setting);
  if (found.setting === 'glassllm.server.path') {
    return words.noExternalServer(tried);
  }
  return found.tried[0]?.candidate.source === 'setting' ? words.badPythonSetting(tried) : words.noPython(tried);
}
