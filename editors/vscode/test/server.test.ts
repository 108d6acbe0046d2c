/**
 * The messages the extension sends, sent to a real glassllm-lsp over stdio: the status
 * bar's `glassllm/stats` requests and the Command Palette's command arguments. Skipped
 * when glassllm-lsp is not on the PATH (tests/editors/test_vscode.py puts it there).
 */
import assert from 'node:assert/strict';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import {
  createProtocolConnection,
  DidOpenTextDocumentNotification,
  ExecuteCommandRequest,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  ProtocolConnection,
  ShowDocumentRequest,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import { COMPARE_TOKENIZERS, editorArguments, EXPLAIN_MERGES, SHOW_STATS, STATS_REQUEST, statsParams } from '../src/commands';
import { Stats, statusText, statusTooltip } from '../src/status';

const SERVER = 'glassllm-lsp';
const missing = spawnSync(SERVER, ['--version']).status !== 0;
// The packaged Portuguese tokenizer: E ra ▁uma ▁vez ▁uma ▁men ina . \n
const TEXT = 'Era uma vez uma menina.\n';
const ERA_UMA_VEZ = { start: { line: 0, character: 0 }, end: { line: 0, character: 11 } };
const MENINA = { start: { line: 0, character: 16 }, end: { line: 0, character: 22 } };

describe('the extension against a real glassllm-lsp', { skip: missing && `${SERVER} is not on the PATH` }, () => {
  let server: ChildProcess;
  let connection: ProtocolConnection;
  let cache: string;
  const shown: string[] = [];
  const uri = pathToFileURL(join(tmpdir(), 'conto.txt')).href;

  before(async () => {
    cache = mkdtempSync(join(tmpdir(), 'glassllm-cache-'));
    server = spawn(SERVER, [], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, XDG_CACHE_HOME: cache } });
    connection = createProtocolConnection(
      new StreamMessageReader(server.stdout!),
      new StreamMessageWriter(server.stdin!),
    );
    connection.onRequest(ShowDocumentRequest.type, (params) => {
      shown.push(params.uri);
      return { success: true };
    });
    connection.listen();
    await connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: null,
      locale: 'en',
      capabilities: { window: { showDocument: { support: true } }, general: { positionEncodings: ['utf-16'] } },
    });
    await connection.sendNotification(InitializedNotification.type, {});
    await connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: 'plaintext', version: 1, text: TEXT },
    });
  });

  after(async () => {
    await connection.sendRequest(ShutdownRequest.type);
    await connection.sendNotification(ExitNotification.type);
    connection.dispose();
    await new Promise((resolve) => (server.exitCode === null ? server.once('exit', resolve) : resolve(null)));
    rmSync(cache, { recursive: true, force: true });
  });

  it('answers the status bar: the document, and a selection against it', async () => {
    const document = await connection.sendRequest<Stats>(STATS_REQUEST, statsParams(uri));
    const selection = await connection.sendRequest<Stats>(STATS_REQUEST, statsParams(uri, ERA_UMA_VEZ));
    // The English tokenizer is compared by default: E ra ▁u m a ▁ ve z ▁u m a ▁men in a . \n
    const compare = [{ tokenizer: 'en', tokens: 16, chunks: 7, unknown: 0 }];
    assert.deepEqual(document, { tokens: 9, chunks: 7, characters: 24, unknown: 0, tokenizer: 'pt', compare });
    assert.equal(statusText(document, selection, 'en'), '$(symbol-text) 4 / 9 tokens');
    assert.match(statusTooltip(document, selection, 'en'), /^  en: 16 tokens · 1\.5 chars\/token · 0 unknown$/m);
  });

  it('explains the selection with the arguments the Command Palette fills in', async () => {
    const explanation = await connection.sendRequest(ExecuteCommandRequest.type, {
      command: EXPLAIN_MERGES,
      arguments: editorArguments(EXPLAIN_MERGES, uri, MENINA),
    });
    assert.deepEqual(
      explanation.chunks.map((chunk: { chunk: string; ids: number[] }) => [chunk.chunk, chunk.ids.length]),
      [['▁menina', 2]],
    );
    // The page arrives through window/showDocument, which the extension opens in the Markdown preview.
    assert.deepEqual(shown, [explanation.page]);
    assert.match(readFileSync(fileURLToPath(explanation.page), 'utf8'), /▁menina/);
  });

  it('compares the tokenizers on the selection with the arguments the Command Palette fills in', async () => {
    shown.length = 0;
    const comparison = await connection.sendRequest(ExecuteCommandRequest.type, {
      command: COMPARE_TOKENIZERS,
      arguments: editorArguments(COMPARE_TOKENIZERS, uri, MENINA),
    });
    assert.deepEqual(
      comparison.chunks[0].tokenizers.map((tok: { tokenizer: string; pieces: string[] }) => [tok.tokenizer, tok.pieces]),
      [['pt', ['▁men', 'ina']], ['en', ['▁men', 'in', 'a']]],
    );
    assert.deepEqual(shown, [comparison.page]);
    assert.match(readFileSync(fileURLToPath(comparison.page), 'utf8'), /^# Compare tokenizers$/m);
  });

  it('shows the document figures with the arguments the Command Palette fills in', async () => {
    const figures = await connection.sendRequest(ExecuteCommandRequest.type, {
      command: SHOW_STATS,
      arguments: editorArguments(SHOW_STATS, uri, MENINA),
    });
    assert.equal(figures.tokens, 9);
  });
});
