/**
 * Which server the extension starts and what it says when none can run: the order that
 * docs/editors.md's VS Code section lists, against a stand-in `probe` that answers as the
 * Pythons of a machine would, and once against real executables.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Choices, findServer, noServerMessage, Probe, probeExecutable, probePython } from '../src/server';

/** A machine with these Pythons: command → version ('missing' when it is not there). */
function machine(versions: Record<string, string>): { probe: (command: string) => Promise<Probe>; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    probe: async (command) => {
      asked.push(command);
      const version = versions[command];
      if (version === undefined || version === 'missing') {
        return { problem: 'notFound', detail: `spawn ${command} ENOENT` };
      }
      const [major, minor] = version.split('.').map(Number);
      return { version: [major, minor] };
    },
  };
}

const nothingSet: Choices = { serverPath: '', serverPython: '', pythonExtension: async () => undefined };
const noExternal = async () => {
  throw new Error('no external server should be probed');
};

describe('findServer', () => {
  it('takes python3 from the PATH when nothing is set and the Python extension is absent', async () => {
    const { probe, asked } = machine({ python3: '3.12', python: '3.13' });
    const found = await findServer(nothingSet, probe, noExternal);
    assert.deepEqual([found.kind, found.kind === 'python' && found.command], ['python', 'python3']);
    assert.deepEqual(asked, ['python3']);
  });

  it('prefers the Python extension interpreter, and passes over it when it is too old', async () => {
    const { probe } = machine({ '/venv/bin/python': '3.11', python3: '3.12' });
    const choices = { ...nothingSet, pythonExtension: async () => '/venv/bin/python' };
    const found = await findServer(choices, probe, noExternal);
    assert.equal(found.kind === 'python' && found.command, '/venv/bin/python');
    const old = machine({ '/venv/bin/python': '3.9', python3: '3.12' });
    const next = await findServer(choices, old.probe, noExternal);
    assert.equal(next.kind === 'python' && next.command, 'python3');
    assert.deepEqual(old.asked, ['/venv/bin/python', 'python3']);
  });

  it('uses glassllm.server.python before anything else, and only it', async () => {
    const { probe, asked } = machine({ '/opt/py/bin/python3.9': '3.9', python3: '3.12' });
    const choices = { ...nothingSet, serverPython: '/opt/py/bin/python3.9', pythonExtension: async () => 'python3' };
    const found = await findServer(choices, probe, noExternal);
    assert.equal(found.kind, 'none');
    assert.deepEqual(asked, ['/opt/py/bin/python3.9']);
    assert.equal(
      noServerMessage(found as Extract<typeof found, { kind: 'none' }>, 'en'),
      'GlassLLM needs Python 3.11 or newer to run its language server, and the setting glassllm.server.python ' +
        '("/opt/py/bin/python3.9") is 3.9. Set glassllm.server.python to one, or clear that setting to let the extension look for one.',
    );
  });

  it('runs an external server from glassllm.server.path without looking for a Python', async () => {
    const { probe, asked } = machine({ python3: '3.12' });
    const found = await findServer({ ...nothingSet, serverPath: '/venv/bin/glassllm-lsp' }, probe, async () => undefined);
    assert.deepEqual(found, { kind: 'external', command: '/venv/bin/glassllm-lsp' });
    assert.deepEqual(asked, []);
  });

  it('says what it tried and found when no Python fits, in English and Portuguese', async () => {
    const found = await findServer(nothingSet, machine({ python3: '3.9' }).probe, noExternal);
    assert.equal(found.kind, 'none');
    const none = found as Extract<typeof found, { kind: 'none' }>;
    assert.equal(none.setting, 'glassllm.server.python');
    assert.equal(
      noServerMessage(none, 'en'),
      'GlassLLM needs Python 3.11 or newer to run its language server. Tried: python3 is 3.9; python: not found. ' +
        'Install Python 3.11 or newer, or set the setting glassllm.server.python to one.',
    );
    assert.match(noServerMessage(none, 'pt'), /^O GlassLLM precisa de Python 3.11 .* Tentou: python3 é 3.9; python: não encontrado\./);
  });

  it('points at glassllm.server.path when the external server is missing', async () => {
    const missing = async (): Promise<Probe> => ({ problem: 'notFound', detail: 'spawn glassllm-lsp ENOENT' });
    const found = await findServer({ ...nothingSet, serverPath: 'glassllm-lsp' }, machine({}).probe, missing);
    assert.equal(found.kind === 'none' && found.setting, 'glassllm.server.path');
    const message = noServerMessage(found as Extract<typeof found, { kind: 'none' }>, 'en');
    assert.match(message, /the setting glassllm\.server\.path \("glassllm-lsp"\): not found/);
    assert.ok(!message.includes('`'), 'notifications do not render Markdown');
  });
});

describe('the probes, on real executables', () => {
  const folder = mkdtempSync(join(tmpdir(), 'glassllm-probe-'));
  const script = (name: string, body: string) => {
    const path = join(folder, name);
    writeFileSync(path, `#!/bin/sh\n${body}\n`);
    chmodSync(path, 0o755);
    return path;
  };

  it('reads the version a Python prints, and tells a missing one from a broken one', async () => {
    assert.deepEqual(await probePython(script('python-3.9', 'echo "3 9"')), { version: [3, 9] });
    assert.equal(((await probePython(join(folder, 'absent'))) as { problem: string }).problem, 'notFound');
    assert.equal(((await probePython(script('broken', 'exit 3'))) as { problem: string }).problem, 'failed');
  });

  it('accepts an external server that answers --version', async () => {
    assert.equal(await probeExecutable(script('server', 'echo glassllm-lsp 0.1.0')), undefined);
    assert.equal(((await probeExecutable(join(folder, 'absent'))) as { problem: string }).problem, 'notFound');
    rmSync(folder, { recursive: true, force: true });
  });
});
