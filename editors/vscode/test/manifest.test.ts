import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

// Compiled to out/test/, so the extension folder is two levels up.
const root = join(__dirname, '..', '..');
const read = (name: string) => JSON.parse(readFileSync(join(root, name), 'utf8'));
const manifest = read('package.json');
const english: Record<string, string> = read('package.nls.json');
const portuguese: Record<string, string> = read('package.nls.pt-br.json');
const source = readFileSync(join(root, 'src', 'commands.ts'), 'utf8');

function placeholders(value: unknown, found: Set<string> = new Set()): Set<string> {
  if (typeof value === 'string') {
    const match = /^%(.+)%$/.exec(value);
    if (match) {
      found.add(match[1]);
    }
  } else if (Array.isArray(value)) {
    value.forEach((item) => placeholders(item, found));
  } else if (value && typeof value === 'object') {
    Object.values(value).forEach((item) => placeholders(item, found));
  }
  return found;
}

describe('package.json', () => {
  it('has every localized string in English and Portuguese, and no unused one', () => {
    const used = [...placeholders(manifest)].sort();
    assert.deepEqual(Object.keys(english).sort(), used);
    assert.deepEqual(Object.keys(portuguese).sort(), used);
    for (const key of used) {
      assert.notEqual(portuguese[key], english[key], `${key} is not translated`);
    }
  });

  it('activates on plain text, Markdown, and JSON and JSON Lines (chat documents)', () => {
    assert.deepEqual(manifest.activationEvents, [
      'onLanguage:plaintext',
      'onLanguage:markdown',
      'onLanguage:json',
      'onLanguage:jsonl',
    ]);
  });

  it('shows only contributed commands in its menus', () => {
    const commands = new Set(manifest.contributes.commands.map((entry: { command: string }) => entry.command));
    for (const entries of Object.values(manifest.contributes.menus) as { command: string }[][]) {
      for (const entry of entries) {
        assert.ok(commands.has(entry.command), `menu entry ${entry.command} is not a contributed command`);
      }
    }
  });

  it('contributes every command the extension names, and names every command it contributes', () => {
    const named = new Set([...source.matchAll(/^export const [A-Z_]+ = '(glassllm\.[A-Za-z]+)';$/gm)].map((match) => match[1]));
    const contributed = new Set(manifest.contributes.commands.map((entry: { command: string }) => entry.command));
    assert.deepEqual([...contributed].sort(), [...named].sort());
  });

  it('gives every setting a type, a default and a description', () => {
    for (const [key, property] of Object.entries(manifest.contributes.configuration.properties) as [
      string,
      Record<string, unknown>,
    ][]) {
      assert.ok(key.startsWith('glassllm.'), key);
      assert.ok('type' in property && 'default' in property, `${key} needs a type and a default`);
      assert.ok(property.markdownDescription, `${key} needs a description`);
    }
  });

  it('points main at the esbuild bundle, which the package keeps with the bundled server', () => {
    assert.equal(manifest.main, './dist/extension.js');
    const kept = readFileSync(join(root, '.vscodeignore'), 'utf8').split('\n');
    assert.ok(kept.includes('!dist/extension.js') && kept.includes('!bundled/**'), kept.join('\n'));
  });

  it('has what a Marketplace or Open VSX page shows', () => {
    assert.ok(statSync(join(root, manifest.icon)).size > 0);
    // No public repository exists yet: no field may point at one (vsce is told so).
    for (const field of ['repository', 'homepage', 'bugs']) {
      assert.equal(manifest[field], undefined, field);
    }
    assert.match(manifest.scripts.package, /--allow-missing-repository/);
    assert.ok(manifest.keywords.length > 0 && manifest.keywords.length <= 30);
    for (const name of ['README.md', 'CHANGELOG.md', 'LICENSE']) {
      assert.ok(statSync(join(root, name)).size > 0, name);
    }
  });
});
