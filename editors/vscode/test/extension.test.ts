/**
 * The extension itself — activate(), vscode-languageclient, the status bar, the
 * middleware — run on Node with a stand-in for the VS Code API (./fake-vscode) and a real
 * glassllm-lsp. Skipped when glassllm-lsp is not on the PATH (tests/editors/test_vscode.py
 * puts it there).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type * as Extension from '../src/extension';
import * as vscode from './fake-vscode';

vscode.install();
// Required after install(), so that its `require('vscode')` gets the stand-in.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const extension: typeof Extension = require('../src/extension');

const missing = spawnSync('glassllm-lsp', ['--version']).status !== 0;
const TEXT = 'Era uma vez uma menina.\n';

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`waited ${timeoutMs} ms for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the extension in a stand-in VS Code', { skip: missing && 'glassllm-lsp is not on the PATH' }, () => {
  const folder = mkdtempSync(join(tmpdir(), 'glassllm-vscode-'));
  const context = { subscriptions: [] as { dispose(): unknown }[] };
  const document = vscode.textDocument(vscode.Uri.file(join(folder, 'conto.txt')), 'plaintext', TEXT);
  const editor = {
    document,
    selection: new vscode.Selection(0, 0, 0, 0),
    selections: [new vscode.Selection(0, 0, 0, 0)],
  };
  const statusBar = () => vscode.fake.statusBarItems[0];

  before(async () => {
    process.env.XDG_CACHE_HOME = join(folder, 'cache');
    vscode.workspace.textDocuments.push(document);
    vscode.window.activeTextEditor = editor;
    await extension.activate(context as never);
  });

  after(async () => {
    await extension.deactivate();
    context.subscriptions.forEach((item) => item.dispose());
    rmSync(folder, { recursive: true, force: true });
  });

  it('shows the document token count in the status bar', async () => {
    await until('the status bar count', () => (statusBar()?.visible ? statusBar().text : undefined));
    assert.equal(statusBar().text, '$(symbol-text) 9 tokens');
    assert.match(statusBar().tooltip, /^GlassLLM · tokenizer pt\nDocument: 9 tokens · 7 chunks · 24 characters/);
    // The English tokenizer, compared by default.
    assert.match(statusBar().tooltip, /^  en: 16 tokens · 1\.5 chars\/token · 0 unknown$/m);
  });

  it('counts the selection as it changes', async () => {
    const selection = new vscode.Selection(0, 0, 0, 11);
    Object.assign(editor, { selection, selections: [selection] });
    vscode.fake.selectionChanged.fire({ textEditor: editor });
    await until('the selection count', () => (statusBar().text.includes(' / ') ? true : undefined));
    assert.equal(statusBar().text, '$(symbol-text) 4 / 9 tokens');
  });

  it('explains the selection from the Command Palette in the Markdown preview', async () => {
    await vscode.commands.executeCommand('glassllm.explainMerges');
    const preview = await until('the Markdown preview', () =>
      vscode.fake.executed.find((call) => call.command === 'markdown.showPreviewToSide'),
    );
    const page = (preview.args[0] as vscode.Uri).fsPath;
    assert.ok(page.startsWith(join(folder, 'cache', 'glassllm')), page);
    const markdown = readFileSync(page, 'utf8');
    for (const chunk of ['Era', '▁uma', '▁vez']) {
      assert.ok(markdown.includes(`\`${chunk}\``), `${chunk} is not explained:\n${markdown}`);
    }
  });

  it('explains the selection from the editor context menu, which passes the document Uri', async () => {
    vscode.fake.executed.length = 0;
    await vscode.commands.executeCommand('glassllm.explainMerges', document.uri);
    const preview = await until('the Markdown preview', () =>
      vscode.fake.executed.find((call) => call.command === 'markdown.showPreviewToSide'),
    );
    assert.match(readFileSync((preview.args[0] as vscode.Uri).fsPath, 'utf8'), /`▁vez`/);
  });

  it('compares the tokenizers on the selection from the Command Palette in the Markdown preview', async () => {
    vscode.fake.executed.length = 0;
    await vscode.commands.executeCommand('glassllm.compareTokenizers');
    const preview = await until('the Markdown preview', () =>
      vscode.fake.executed.find((call) => call.command === 'markdown.showPreviewToSide'),
    );
    const page = (preview.args[0] as vscode.Uri).fsPath;
    assert.match(page, /compare-conto-/);
    const markdown = readFileSync(page, 'utf8');
    assert.match(markdown, /^# Compare tokenizers$/m);
    assert.match(markdown, /^\| \| Portuguese \(pt\) \| English \(en\) \|$/m);
    assert.match(markdown, /`▁vez`/);
  });

  it('re-counts with the tokenizer chosen from the Command Palette', async () => {
    vscode.fake.pick = 'en';
    await vscode.commands.executeCommand('glassllm.chooseTokenizer');
    assert.equal(vscode.fake.settings.get('glassllm.tokenizer'), 'en');
    await until('the count with the English tokenizer', () => (statusBar().tooltip.includes('tokenizer en') ? true : undefined));
    // English pieces: E ra ▁u m a ▁ ve z | ▁u m a ▁men in a . and the line break.
    assert.equal(statusBar().text, '$(symbol-text) 8 / 16 tokens');
  });

  it('trains a tokenizer on the active document from the Command Palette', async () => {
    const output = join(folder, 'conto-tokenizer.json');
    Object.assign(vscode.fake, { pick: 'The active document', input: '30', saveAs: vscode.Uri.file(output) });
    const result = (await vscode.commands.executeCommand('glassllm.trainTokenizer')) as { path: string; vocabSize: number };
    assert.equal(result.path, output);
    const trained = JSON.parse(readFileSync(output, 'utf8'));
    assert.ok(trained.merges.length > 0 && result.vocabSize <= 30, JSON.stringify(result));
  });
});
