/**
 * The server's commands and requests as the extension calls them, kept apart from the VS
 * Code API so Node tests can send exactly these messages to a real glassllm-lsp.
 */

export const EXPLAIN_MERGES = 'glassllm.explainMerges';
export const COMPARE_TOKENIZERS = 'glassllm.compareTokenizers';
export const OPEN_IN_BROWSER = 'glassllm.openInBrowser';
export const SHOW_STATS = 'glassllm.showStats';
export const TRAIN_TOKENIZER = 'glassllm.trainTokenizer';
export const TOKEN_MAP = 'glassllm.tokenMap';
export const CHOOSE_TOKENIZER = 'glassllm.chooseTokenizer';
export const STATS_REQUEST = 'glassllm/stats';
/** Sent by the server when `glassllm/stats` would answer otherwise without an edit. */
export const TOKENIZERS_CHANGED = 'glassllm/tokenizersChanged';

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

/** The pages `glassllm.openInBrowser` opens: the merge explanation or the comparison. */
export type BrowserPage = 'explain' | 'compare';

/**
 * The arguments of a server command run from the Command Palette, taken from the active
 * editor: explain the selection (or the token at the cursor), compare the tokenizers on
 * it, open either page in the browser (`page`, which the user picks), count the document.
 * Other commands ask the user for theirs (undefined here).
 */
export function editorArguments(
  command: string,
  uri: string,
  selection: LspRange,
  page?: BrowserPage,
): unknown[] | undefined {
  if (command === EXPLAIN_MERGES || command === COMPARE_TOKENIZERS) {
    return [uri, selection];
  }
  if (command === OPEN_IN_BROWSER && page) {
    return [uri, selection, page];
  }
  if (command === SHOW_STATS) {
    return [uri];
  }
  return undefined;
}

/** The params of `glassllm/stats`: the whole document, or a range of it. */
export function statsParams(uri: string, range?: LspRange): { textDocument: { uri: string }; range?: LspRange } {
  return range ? { textDocument: { uri }, range } : { textDocument: { uri } };
}
