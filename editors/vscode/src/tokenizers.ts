/**
 * What the "Choose tokenizer" command offers and writes into `glassllm.tokenizer`, kept
 * apart from the VS Code API so Node tests cover it: the `hf:` ids the server accepts, the
 * models of the local Hugging Face cache that have a tokenizer, and the value written for
 * a file at the chosen scope.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { Language, MESSAGES } from './messages';

export const PACKAGED = ['pt', 'en'] as const;
export const HF_PREFIX = 'hf:';
// The server's rule (glassllm/formats/hub.py): ORG/NAME or NAME, then @REVISION if any.
const HF_ID = /^(?:([\w.-]+)\/)?([\w.-]+)(?:@([\w./-]+))?$/;
// The files that make a snapshot a tokenizer, in the order the server looks for them.
const TOKENIZER_FILES = ['tokenizer.json', 'tekken.json', 'tokenizer.model'];
// Names that every model's file has (tokenizer.json, tokenizer.model.v3, tekken.json):
// the folder must come with them to tell one model from another.
const GENERIC_NAME = /^(?:tokenizer\.|tekken\.json$)/;

/** `hf:ORG/NAME[@REV]` as typed (the `hf:` may be left out), or undefined when it is not one. */
export function hfSpec(typed: string): string | undefined {
  const id = typed.trim().replace(/^hf:/, '');
  return HF_ID.test(id) && !id.includes('..') ? HF_PREFIX + id : undefined;
}

/** What is wrong with a typed model id, for the input box; undefined when it is one. */
export function hfIdProblem(typed: string, language: Language): string | undefined {
  return hfSpec(typed) ? undefined : MESSAGES[language].hfIdInvalid;
}

/** The Hugging Face hub cache folder, found as `huggingface_hub` (and the server) find it. */
export function hubCache(env: NodeJS.ProcessEnv, home: string): string {
  if (env.HF_HUB_CACHE) {
    return expandHome(env.HF_HUB_CACHE, home);
  }
  if (env.HF_HOME) {
    return path.join(expandHome(env.HF_HOME, home), 'hub');
  }
  return path.join(expandHome(env.XDG_CACHE_HOME || '~/.cache', home), 'huggingface', 'hub');
}

function expandHome(folder: string, home: string): string {
  return folder === '~' || folder.startsWith('~/') ? path.join(home, folder.slice(1)) : folder;
}

export interface CachedModel {
  /** What the setting takes: `hf:ORG/NAME`. */
  spec: string;
  /** The tokenizer file the server would load from the model's main snapshot. */
  file: string;
}

/**
 * The models in the hub cache `cache` whose main revision has a tokenizer file, sorted by
 * id. A missing or unreadable cache has none; a model's folder that is half there is left out.
 */
export function cachedModels(cache: string): CachedModel[] {
  let folders: string[];
  try {
    folders = readdirSync(cache);
  } catch {
    return [];
  }
  const models: CachedModel[] = [];
  for (const folder of folders) {
    if (!folder.startsWith('models--')) {
      continue;
    }
    const spec = hfSpec(folder.slice('models--'.length).split('--').join('/'));
    const file = spec && mainTokenizerFile(path.join(cache, folder));
    if (spec && file) {
      models.push({ spec, file });
    }
  }
  return models.sort((a, b) => a.spec.localeCompare(b.spec));
}

function mainTokenizerFile(model: string): string | undefined {
  try {
    const commit = readFileSync(path.join(model, 'refs', 'main'), 'utf8').trim();
    const snapshot = path.join(model, 'snapshots', commit);
    return TOKENIZER_FILES.map((name) => path.join(snapshot, name)).find((file) => isFile(file));
  } catch {
    return undefined;
  }
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The setting's value for a tokenizer file: relative to the workspace's first folder (the
 * server's root, which it resolves relative paths against) when the setting is the
 * workspace's and the file is inside that folder, which keeps the setting shareable;
 * absolute otherwise (a user setting serves every workspace).
 */
export function fileSetting(file: string, workspaceRoot: string | undefined): string {
  if (workspaceRoot) {
    const relative = path.relative(workspaceRoot, file);
    if (relative && !relative.startsWith('..') && !path.isAbsolute(relative)) {
      return relative;
    }
  }
  return file;
}

/**
 * A tokenizer as the status bar tooltip names it: `en` and `hf:` ids whole, a file by its
 * name, with its folder when the name is one that every model's file has
 * (`llama3/tokenizer.json`).
 */
export function tokenizerName(tokenizer: string): string {
  if (tokenizer.startsWith(HF_PREFIX)) {
    return tokenizer;
  }
  const parts = tokenizer.split(/[\\/]/).filter(Boolean);
  const name = parts.pop() || tokenizer;
  const folder = parts.pop();
  return GENERIC_NAME.test(name) && folder ? `${folder}/${name}` : name;
}
