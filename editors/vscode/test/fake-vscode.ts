/**
 * The part of the VS Code API that the extension and vscode-languageclient use while a
 * client starts, opens one document, counts its tokens and runs commands — enough to run
 * the real extension against a real glassllm-lsp on Node. Everything else is a no-op that
 * returns a disposable, so unused features register quietly.
 *
 * `install()` makes `require('vscode')` return this module; call it before the extension
 * (or vscode-languageclient) is first required.
 */
/* eslint-disable @typescript-eslint/no-explicit-any */
import Module from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

type Listener<T> = (event: T) => unknown;

export class EventEmitter<T> {
  private listeners: Listener<T>[] = [];
  event = (listener: Listener<T>) => {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((item) => item !== listener)) };
  };
  fire(event: T): void {
    [...this.listeners].forEach((listener) => listener(event));
  }
  dispose(): void {
    this.listeners = [];
  }
}

export class Disposable {
  constructor(private readonly callback: () => void = () => undefined) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((item) => item.dispose()));
  }
  dispose(): void {
    this.callback();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly path: string,
  ) {}
  static file(path: string): Uri {
    return new Uri('file', path);
  }
  static parse(value: string): Uri {
    return value.startsWith('file:') ? Uri.file(fileURLToPath(value)) : new Uri(value.split(':')[0], value);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri(base.scheme, [base.path, ...parts].join('/'));
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return this.scheme === 'file' ? pathToFileURL(this.path).href : this.path;
  }
  toJSON(): string {
    return this.toString();
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(startLine: any, startCharacter: any, endLine?: number, endCharacter?: number) {
    if (startLine instanceof Position) {
      this.start = startLine;
      this.end = startCharacter;
    } else {
      this.start = new Position(startLine, startCharacter);
      this.end = new Position(endLine!, endCharacter!);
    }
  }
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

export class Selection extends Range {}

export class CancellationError extends Error {}

export class CodeActionKind {
  static readonly Empty = new CodeActionKind('');
  constructor(readonly value: string) {}
  append(part: string): CodeActionKind {
    return new CodeActionKind(this.value ? `${this.value}.${part}` : part);
  }
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: this.emitter.event,
  };
  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.emitter.fire();
    }
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
  WorkspaceFolder = 3,
}

export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}

export class TabInputText {}
export class TabInputTextDiff {}
export class TabInputCustom {}

export const version = '1.82.0';
export const env = { language: 'en', appName: 'Fake VS Code', openExternal: async () => true };

/** An open text document with fixed text. */
export function textDocument(uri: Uri, languageId: string, text: string): any {
  const lines = text.split('\n');
  return {
    uri,
    languageId,
    version: 1,
    fileName: uri.fsPath,
    isUntitled: false,
    isClosed: false,
    isDirty: false,
    eol: 1,
    lineCount: lines.length,
    getText: () => text,
  };
}

/** What the tests set up and look at. */
export const fake = {
  settings: new Map<string, unknown>(),
  commands: new Map<string, (...args: any[]) => any>(),
  executed: [] as { command: string; args: unknown[] }[],
  statusBarItems: [] as any[],
  messages: [] as string[],
  // What the user picks in a quick pick (the item with this label), types in an input box,
  // and chooses in a save dialog.
  pick: undefined as string | undefined,
  input: undefined as string | undefined,
  saveAs: undefined as Uri | undefined,
  selectionChanged: new EventEmitter<any>(),
  activeEditorChanged: new EventEmitter<any>(),
  documentChanged: new EventEmitter<any>(),
  configurationChanged: new EventEmitter<any>(),
};

function quietly(target: Record<string | symbol, any>): any {
  return new Proxy(target, {
    get: (object, key) => {
      if (!(key in object)) {
        object[key] = () => new Disposable();
      }
      return object[key];
    },
  });
}

export const workspace = quietly({
  textDocuments: [] as any[],
  workspaceFolders: undefined,
  // Like VS Code: dotted setting names form a tree; a section is a subtree.
  getConfiguration: (section?: string) => {
    const tree: Record<string, any> = {};
    for (const [name, value] of fake.settings) {
      const parts = name.split('.');
      let node = tree;
      parts.slice(0, -1).forEach((part) => (node = node[part] ??= {}));
      node[parts[parts.length - 1]] = value;
    }
    const walk = (path: string | undefined) =>
      (path ? path.split('.') : []).reduce<any>((node, part) => (node === undefined ? undefined : node[part]), tree);
    const root = walk(section) ?? {};
    const prefix = section ? `${section}.` : '';
    return {
      ...root,
      get: (key: string, fallback?: unknown) => walk(prefix + key) ?? fallback,
      has: (key: string) => walk(prefix + key) !== undefined,
      inspect: () => undefined,
      update: async (key: string, value: unknown) => {
        fake.settings.set(prefix + key, value);
        fake.configurationChanged.fire({ affectsConfiguration: (name: string) => `${prefix}${key}`.startsWith(name) });
      },
    };
  },
  getWorkspaceFolder: () => undefined,
  onDidChangeTextDocument: fake.documentChanged.event,
  onDidChangeConfiguration: fake.configurationChanged.event,
});

export const window = quietly({
  activeTextEditor: undefined as any,
  visibleTextEditors: [] as any[],
  tabGroups: { all: [], onDidChangeTabs: new EventEmitter<any>().event },
  onDidChangeTextEditorSelection: fake.selectionChanged.event,
  onDidChangeActiveTextEditor: fake.activeEditorChanged.event,
  createStatusBarItem: () => {
    const item = { text: '', tooltip: '', visible: false, show: () => (item.visible = true), hide: () => (item.visible = false), dispose: () => undefined };
    fake.statusBarItems.push(item);
    return item;
  },
  createOutputChannel: (name: string) =>
    quietly({ name, append: () => undefined, appendLine: () => undefined, replace: () => undefined }),
  showQuickPick: async (items: { label: string }[]) => items.find((item) => item.label === fake.pick),
  showInputBox: async (options: { validateInput?: (value: string) => unknown }) =>
    fake.input !== undefined && !options.validateInput?.(fake.input) ? fake.input : undefined,
  showSaveDialog: async () => fake.saveAs,
  showOpenDialog: async () => undefined,
  withProgress: async (_options: unknown, task: (progress: unknown, token: unknown) => unknown) =>
    task({ report: () => undefined }, new CancellationTokenSource().token),
  showInformationMessage: async (message: string) => void fake.messages.push(message),
  showWarningMessage: async (message: string) => void fake.messages.push(message),
  showErrorMessage: async (message: string) => void fake.messages.push(message),
});

export const commands = quietly({
  registerCommand: (command: string, callback: (...args: any[]) => any) => {
    fake.commands.set(command, callback);
    return new Disposable(() => fake.commands.delete(command));
  },
  executeCommand: async (command: string, ...args: unknown[]) => {
    fake.executed.push({ command, args });
    return fake.commands.get(command)?.(...args);
  },
});

export const languages = quietly({
  match: (selector: any, document: any) => {
    const selectors = Array.isArray(selector) ? selector : [selector];
    return selectors.some((item) => (typeof item === 'string' ? item : item.language) === document.languageId) ? 10 : 0;
  },
  createDiagnosticCollection: () =>
    quietly({ set: () => undefined, delete: () => undefined, clear: () => undefined, get: () => [], has: () => false }),
});

/**
 * Make `require('vscode')` resolve to this module, where any name it does not define is an
 * empty class (vscode-languageclient extends and instantiates many at load time).
 */
export function install(): void {
  const loader = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
  const resolve = loader._resolveFilename;
  loader._resolveFilename = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? __filename : resolve.call(this, request, ...rest);
  };
  const exported = module.exports as Record<string | symbol, unknown>;
  module.exports = new Proxy(exported, {
    get: (target, key) => {
      if (!(key in target)) {
        target[key] = class {};
      }
      return target[key];
    },
  });
  require.cache[__filename]!.exports = module.exports;
}
