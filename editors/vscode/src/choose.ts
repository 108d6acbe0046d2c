/**
 * The "Choose tokenizer" command (Command Palette, and a click on the status bar item):
 * a packaged tokenizer, a model of the local Hugging Face cache, a tokenizer file or a
 * typed `hf:` id, written into `glassllm.tokenizer` in the workspace's or the user's
 * settings. The server loads it and re-tokenizes every open document; when it cannot, it
 * says why once and keeps the tokenizer it had.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Language, MESSAGES } from './messages';
import { cachedModels, fileSetting, HF_PREFIX, hfIdProblem, hfSpec, hubCache, PACKAGED } from './tokenizers';

type Choice = vscode.QuickPickItem & { value?: () => Promise<string | undefined> };

const SETTING = 'tokenizer';

function settings(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('glassllm');
}

export async function chooseTokenizer(language: Language): Promise<void> {
  const words = MESSAGES[language];
  const current = settings().get<string>(SETTING);
  const fixed = (value: string) => async () => value;
  const choices: Choice[] = [
    { label: 'pt', description: `${words.portuguese} · ${words.packaged}`, value: fixed('pt') },
    { label: 'en', description: `${words.english} · ${words.packaged}`, value: fixed('en') },
  ];
  if (current && !(PACKAGED as readonly string[]).includes(current)) {
    choices.push({ label: current, value: fixed(absolute(current)) });
  }
  const cached = cachedModels(hubCache(process.env, os.homedir())).filter((model) => model.spec !== current);
  if (cached.length > 0) {
    choices.push({ label: words.inHubCache, kind: vscode.QuickPickItemKind.Separator });
    choices.push(...cached.map((model) => ({ label: model.spec, description: path.basename(model.file), value: fixed(model.spec) })));
  }
  choices.push(
    { label: '', kind: vscode.QuickPickItemKind.Separator },
    { label: words.fromFile, description: words.fileFormats, value: () => askFile(words) },
    { label: words.hfId, description: words.hfIdFormat, value: () => askHfId(language) },
  );
  for (const choice of choices) {
    if (choice.label === current) {
      choice.detail = words.current;
    }
  }
  const choice = await vscode.window.showQuickPick(choices, { placeHolder: words.chooseTokenizer });
  const picked = await choice?.value?.();
  if (picked === undefined) {
    return;
  }
  const target = await askTarget(words);
  if (target === undefined) {
    return;
  }
  await settings().update(SETTING, storedValue(picked, target), target);
  if (target === vscode.ConfigurationTarget.Global) {
    await warnIfOverridden(words);
  }
}

/** The current setting as a value to store again: a relative path is the root folder's. */
function absolute(value: string): string {
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const isPath = !value.startsWith(HF_PREFIX) && !value.startsWith('~') && !path.isAbsolute(value);
  return root && isPath ? path.join(root, value) : value;
}

/** A file's absolute path (made relative to the workspace when saved there: storedValue). */
async function askFile(words: (typeof MESSAGES)[Language]): Promise<string | undefined> {
  // A model's file may have any extension (tokenizer.model.v3): the server reads its content.
  const files = await vscode.window.showOpenDialog({
    canSelectMany: false,
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
    filters: { [words.modelFiles]: ['json', 'model'], [words.allFiles]: ['*'] },
  });
  return files?.[0]?.fsPath;
}

async function askHfId(language: Language): Promise<string | undefined> {
  const typed = await vscode.window.showInputBox({
    prompt: MESSAGES[language].hfIdPrompt,
    value: HF_PREFIX,
    valueSelection: [HF_PREFIX.length, HF_PREFIX.length],
    validateInput: (value) => hfIdProblem(value, language),
  });
  return typed === undefined ? undefined : hfSpec(typed);
}

/** The workspace's settings or the user's; the user's alone when no folder is open. */
async function askTarget(words: (typeof MESSAGES)[Language]): Promise<vscode.ConfigurationTarget | undefined> {
  if (!vscode.workspace.workspaceFolders) {
    return vscode.ConfigurationTarget.Global;
  }
  const targets = [
    { label: words.workspaceScope, detail: words.workspaceScopeDetail, target: vscode.ConfigurationTarget.Workspace },
    { label: words.userScope, detail: words.userScopeDetail, target: vscode.ConfigurationTarget.Global },
  ];
  return (await vscode.window.showQuickPick(targets, { placeHolder: words.saveIn }))?.target;
}

function storedValue(picked: string, target: vscode.ConfigurationTarget): string {
  if ((PACKAGED as readonly string[]).includes(picked) || picked.startsWith(HF_PREFIX)) {
    return picked;
  }
  const root = target === vscode.ConfigurationTarget.Workspace ? vscode.workspace.workspaceFolders?.[0] : undefined;
  return fileSetting(picked, root?.uri.fsPath);
}

/** A user setting changes nothing where the workspace (or its first folder) sets its own. */
async function warnIfOverridden(words: (typeof MESSAGES)[Language]): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const inspected = vscode.workspace.getConfiguration('glassllm', folder?.uri).inspect<string>(SETTING);
  const own = inspected?.workspaceFolderValue ?? inspected?.workspaceValue;
  if (own === undefined) {
    return;
  }
  const answer = await vscode.window.showWarningMessage(words.overridden(own), words.removeWorkspaceSetting);
  if (answer === words.removeWorkspaceSetting) {
    if (inspected?.workspaceFolderValue !== undefined && folder) {
      await vscode.workspace
        .getConfiguration('glassllm', folder.uri)
        .update(SETTING, undefined, vscode.ConfigurationTarget.WorkspaceFolder);
    }
    if (inspected?.workspaceValue !== undefined) {
      await settings().update(SETTING, undefined, vscode.ConfigurationTarget.Workspace);
    }
  }
}
