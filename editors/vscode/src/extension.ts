/**
 * The GlassLLM extension: starts the language server it carries (or an external
 * `glassllm-lsp`) with vscode-languageclient for plain text and Markdown, keeps a status
 * bar item with the token count of the document and of the selection, shows merge
 * explanations in the Markdown preview, and gives the server's commands a way to be run
 * from the Command Palette.
 */
import * as path from 'node:path';
import { PythonExtension, PVSC_EXTENSION_ID } from '@vscode/python-extension';
import * as vscode from 'vscode';
import {
  CancellationToken,
  CancellationTokenSource,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';
import {
  BrowserPage,
  CHOOSE_TOKENIZER,
  COMPARE_TOKENIZERS,
  editorArguments,
  EXPLAIN_MERGES,
  OPEN_IN_BROWSER,
  SHOW_STATS,
  STATS_REQUEST,
  statsParams,
  TOKENIZERS_CHANGED,
  TRAIN_TOKENIZER,
} from './commands';
import { chooseTokenizer } from './choose';
import { LatestOnly } from './latest';
import { Language, MESSAGES } from './messages';
import { findServer, noServerMessage } from './server';
import { Stats, budgetState, statusText, statusTooltip, sumStats, uiLanguage } from './status';

// JSON and JSON Lines for chat documents (a conversation, a dataset: see docs/models.md).
const LANGUAGES = ['plaintext', 'markdown', 'json', 'jsonl'];
const STATUS_DELAY_MS = 150;

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
// Where the running server's Python came from, to follow the Python extension's choice.
let serverSource: string | undefined;
// Where `vscode:prepublish` pip-installs the server and its dependencies.
let bundledLibs: string;

function settings(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('glassllm');
}

function language(): Language {
  return uiLanguage(settings().get<string | null>('locale'), vscode.env.language);
}

function isGlassDocument(document: vscode.TextDocument): boolean {
  return LANGUAGES.includes(document.languageId);
}

/** The `glassllm` section as the server reads it, without the keys only this extension uses. */
function serverSettings(): Record<string, unknown> {
  const section = JSON.parse(JSON.stringify(settings())) as Record<string, unknown>;
  delete section.server;
  delete section.trace;
  return section;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const statusBar = new TokenStatusBar();
  output = vscode.window.createOutputChannel('GlassLLM');
  bundledLibs = context.asAbsolutePath(path.join('bundled', 'libs'));
  context.subscriptions.push(
    statusBar,
    output,
    vscode.commands.registerCommand(CHOOSE_TOKENIZER, () => chooseTokenizer(language())),
    vscode.window.onDidChangeActiveTextEditor(() => statusBar.refresh()),
    vscode.window.onDidChangeTextEditorSelection((event) => {
      if (event.textEditor === vscode.window.activeTextEditor) {
        statusBar.refresh();
      }
    }),
    vscode.workspace.onDidChangeTextDocument((event) => {
      if (event.document === vscode.window.activeTextEditor?.document) {
        statusBar.refresh();
      }
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration('glassllm.server')) {
        await stopClient();
        await startClient(statusBar);
      } else if (event.affectsConfiguration('glassllm')) {
        statusBar.refresh();
      }
    }),
  );
  await startClient(statusBar);
  await followPythonExtension(context, statusBar);
}

/**
 * The Python extension's interpreter comes before `python3` and `python`: unless a setting
 * chose the server, selecting another interpreter there restarts it with the new one.
 */
async function followPythonExtension(context: vscode.ExtensionContext, statusBar: TokenStatusBar): Promise<void> {
  if (!vscode.extensions.getExtension(PVSC_EXTENSION_ID)) {
    return;
  }
  try {
    const environments = (await PythonExtension.api()).environments;
    context.subscriptions.push(
      environments.onDidChangeActiveEnvironmentPath(async () => {
        if (serverSource !== 'setting' && serverSource !== 'external') {
          await stopClient();
          await startClient(statusBar);
        }
      }),
    );
  } catch (error) {
    output.appendLine(`The Python extension's API is not available: ${String(error)}`);
  }
}

export async function deactivate(): Promise<void> {
  await stopClient();
}

async function stopClient(): Promise<void> {
  const running = client;
  client = undefined;
  if (running && running.state !== State.Stopped) {
    await running.stop();
  }
}

/** The interpreter selected in the Python extension, when that extension is installed. */
async function pythonExtensionInterpreter(): Promise<string | undefined> {
  if (!vscode.extensions.getExtension(PVSC_EXTENSION_ID)) {
    return undefined;
  }
  try {
    const environments = (await PythonExtension.api()).environments;
    const active = environments.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri);
    return (await environments.resolveEnvironment(active))?.executable.uri?.fsPath ?? active.path;
  } catch (error) {
    output.appendLine(`The Python extension did not say which interpreter is selected: ${String(error)}`);
    return undefined;
  }
}

/**
 * Opens the Settings editor on a setting. Our server settings are `machine-overridable`:
 * in a remote window (code-server, Remote-SSH, WSL, dev containers) VS Code lists them
 * only on the Remote tab, so the User tab would not show them.
 */
async function openSetting(key: string): Promise<void> {
  const command = vscode.env.remoteName ? 'workbench.action.openRemoteSettings' : 'workbench.action.openSettings';
  await vscode.commands.executeCommand(command, { query: key });
}

async function startClient(statusBar: TokenStatusBar): Promise<void> {
  const words = MESSAGES[language()];
  const found = await findServer({
    serverPath: settings().get<string>('server.path') ?? '',
    serverPython: settings().get<string>('server.python') ?? '',
    pythonExtension: pythonExtensionInterpreter,
  });
  if (found.kind === 'none') {
    serverSource = undefined;
    const message = noServerMessage(found, language());
    output.appendLine(message);
    // Not awaited: activation would wait for the user to answer.
    void vscode.window.showErrorMessage(message, words.openSettings).then((choice) =>
      choice === words.openSettings ? openSetting(found.setting) : undefined,
    );
    return;
  }
  serverSource = found.kind === 'python' ? found.tried[found.tried.length - 1].candidate.source : 'external';
  const args = settings().get<string[]>('server.args') ?? [];
  // No `transport`: with TransportKind.stdio the client would append `--stdio`, which
  // the server does not take; it speaks over stdio by default.
  let serverOptions: ServerOptions;
  if (found.kind === 'external') {
    output.appendLine(`Starting ${found.command} ${args.join(' ')}`.trimEnd());
    serverOptions = { command: found.command, args };
  } else {
    // The bundled libraries come first on sys.path, ahead of anything that Python has
    // installed; -P (3.11+) keeps the workspace folder, the server's working directory, off
    // sys.path, where a folder named glassllm (this repository, say) would shadow them.
    const pythonPath = [bundledLibs, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter);
    output.appendLine(`Starting the bundled server with ${found.command} (Python ${found.version.join('.')}), PYTHONPATH=${pythonPath}`);
    serverOptions = {
      command: found.command,
      args: ['-P', '-m', 'glassllm_server', ...args],
      options: { env: { ...process.env, PYTHONPATH: pythonPath } },
    };
  }
  const clientOptions: LanguageClientOptions = {
    documentSelector: LANGUAGES.map((languageId) => ({ language: languageId })),
    synchronize: { configurationSection: 'glassllm' },
    initializationOptions: serverSettings,
    outputChannel: output,
    middleware: {
      executeCommand: runServerCommand,
      window: { showDocument: showExplanation },
    },
  };
  const started = new LanguageClient('glassllm', 'GlassLLM', serverOptions, clientOptions);
  started.onDidChangeState(() => statusBar.refresh());
  // A tokenizer whose file loads slowly switches after the settings change that named it
  // (and a compared one joins later): the count follows without waiting for an edit.
  started.onNotification(TOKENIZERS_CHANGED, () => statusBar.refresh());
  client = started;
  try {
    await started.start();
  } catch (error) {
    // vscode-languageclient has already shown its own notification, which opens this channel.
    client = undefined;
    output.appendLine(`The server did not start: ${String(error)}`);
  }
}

/**
 * vscode-languageclient registers the server's commands itself; this middleware fills in
 * their arguments when they come from the Command Palette (no arguments) or the editor's
 * context menu (the document's Uri) instead of a code action or lens.
 */
async function runServerCommand(
  command: string,
  args: unknown[],
  next: (command: string, args: unknown[]) => vscode.ProviderResult<unknown>,
): Promise<unknown> {
  const fromMenu = args.length === 0 || (args.length === 1 && args[0] instanceof vscode.Uri);
  if (!fromMenu || !client) {
    return next(command, args);
  }
  if ([EXPLAIN_MERGES, COMPARE_TOKENIZERS, SHOW_STATS, OPEN_IN_BROWSER].includes(command)) {
    const editor = vscode.window.activeTextEditor;
    if (!editor || !isGlassDocument(editor.document)) {
      void vscode.window.showInformationMessage(MESSAGES[language()].noEditor);
      return undefined;
    }
    const page = command === OPEN_IN_BROWSER ? await askBrowserPage() : undefined;
    if (command === OPEN_IN_BROWSER && !page) {
      return undefined;
    }
    const converter = client.code2ProtocolConverter;
    const uri = converter.asUri(editor.document.uri);
    return next(command, editorArguments(command, uri, converter.asRange(editor.selection), page) ?? []);
  }
  if (command === TRAIN_TOKENIZER) {
    const trainArgs = await askTrainingArguments();
    return trainArgs ? next(command, trainArgs) : undefined;
  }
  return next(command, args);
}

/**
 * Explanations arrive as Markdown files: show them rendered, beside the text they explain.
 * A page for the browser opens in the user's default browser where it can reach the file.
 */
async function showExplanation(
  params: { uri: string; external?: boolean; takeFocus?: boolean },
  next: (params: { uri: string }, token: CancellationToken) => unknown,
): Promise<{ success: boolean }> {
  const uri = vscode.Uri.parse(params.uri);
  if (params.external && uri.scheme === 'file' && (vscode.env.uiKind === vscode.UIKind.Web || vscode.env.remoteName)) {
    // The page is a file on the server's machine, out of reach of the user's browser in a
    // remote or web window: the server then says where the file is.
    return { success: false };
  }
  if (!params.external && uri.scheme === 'file' && uri.path.endsWith('.md')) {
    try {
      await vscode.commands.executeCommand('markdown.showPreviewToSide', uri);
      return { success: true };
    } catch {
      // The built-in Markdown extension is disabled: open the file as text instead.
    }
  }
  return (await next(params, new CancellationTokenSource().token)) as { success: boolean };
}

/** Which page to open in the browser: the explanation or the comparison. */
async function askBrowserPage(): Promise<BrowserPage | undefined> {
  const words = MESSAGES[language()];
  const pages: (vscode.QuickPickItem & { page: BrowserPage })[] = [
    { label: words.explanationPage, page: 'explain' },
    { label: words.comparisonPage, page: 'compare' },
  ];
  return (await vscode.window.showQuickPick(pages, { placeHolder: words.browserPage }))?.page;
}

async function askTrainingArguments(): Promise<[string, number, string] | undefined> {
  const words = MESSAGES[language()];
  const editor = vscode.window.activeTextEditor;
  const sources: (vscode.QuickPickItem & { pick: () => Promise<vscode.Uri | undefined> })[] = [];
  if (editor) {
    sources.push({
      label: words.activeDocument,
      description: path.basename(editor.document.uri.path),
      pick: async () => editor.document.uri,
    });
  }
  sources.push({
    label: words.aFolder,
    pick: async () =>
      (await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false }))?.[0],
  });
  const source = await vscode.window.showQuickPick(sources, { placeHolder: words.trainSource });
  const corpus = await source?.pick();
  if (!corpus || !client) {
    return undefined;
  }
  const size = await vscode.window.showInputBox({
    prompt: words.vocabSize,
    value: '1024',
    validateInput: (value) => (/^\d+$/.test(value.trim()) && Number(value) >= 5 ? undefined : words.vocabSizeInvalid),
  });
  if (size === undefined) {
    return undefined;
  }
  const folder = vscode.workspace.getWorkspaceFolder(corpus)?.uri ?? vscode.Uri.joinPath(corpus, '..');
  const output = await vscode.window.showSaveDialog({
    title: words.trainOutput,
    defaultUri: vscode.Uri.joinPath(folder, 'tokenizer.json'),
    filters: { [words.tokenizerFiles]: ['json'] },
  });
  if (!output) {
    return undefined;
  }
  return [client.code2ProtocolConverter.asUri(corpus), Number(size.trim()), output.fsPath];
}

interface EditorStats {
  document: Stats;
  selection: Stats | undefined;
}

/** The status bar item: the active document's token count and its selection's, from `glassllm/stats`. */
class TokenStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('glassllm.tokens', vscode.StatusBarAlignment.Right, 100);
  private readonly latest = new LatestOnly<EditorStats | undefined>(
    STATUS_DELAY_MS,
    (signal) => this.fetch(signal),
    (stats) => this.show(stats),
    (error) => this.showError(error),
  );

  constructor() {
    this.item.name = 'GlassLLM';
    this.item.command = CHOOSE_TOKENIZER;
  }

  refresh(): void {
    const editor = vscode.window.activeTextEditor;
    if (!editor || !isGlassDocument(editor.document) || client?.state !== State.Running) {
      this.latest.dispose();
      this.item.hide();
      return;
    }
    this.latest.poke();
  }

  dispose(): void {
    this.latest.dispose();
    this.item.dispose();
  }

  private async fetch(signal: AbortSignal): Promise<EditorStats | undefined> {
    const editor = vscode.window.activeTextEditor;
    const running = client;
    if (!editor || !running || running.state !== State.Running) {
      return undefined;
    }
    const cancel = new CancellationTokenSource();
    signal.addEventListener('abort', () => cancel.cancel());
    const uri = running.code2ProtocolConverter.asUri(editor.document.uri);
    const ask = (range?: vscode.Range) =>
      running.sendRequest<Stats>(
        STATS_REQUEST,
        statsParams(uri, range && running.code2ProtocolConverter.asRange(range)),
        cancel.token,
      );
    const selections = editor.selections.filter((selection) => !selection.isEmpty);
    const [document, ...parts] = await Promise.all([ask(), ...selections.map((selection) => ask(selection))]);
    return { document, selection: sumStats(parts) };
  }

  private show(stats: EditorStats | undefined): void {
    if (!stats) {
      this.item.hide();
      return;
    }
    const lang = language();
    this.item.text = statusText(stats.document, stats.selection, lang);
    this.item.tooltip = statusTooltip(stats.document, stats.selection, lang);
    // Over its token budget: the item takes the colours of the budget's severity.
    const over = budgetState(stats.document);
    this.item.backgroundColor = over ? new vscode.ThemeColor(`statusBarItem.${over}Background`) : undefined;
    this.item.show();
  }

  private showError(error: unknown): void {
    this.item.text = '$(symbol-text) ?';
    this.item.tooltip = `${MESSAGES[language()].statsFailed}: ${error instanceof Error ? error.message : String(error)}`;
    this.item.show();
  }
}
