/**
 * What the status bar says about a document and its selection: pure functions of the
 * server's `glassllm/stats` answers, kept apart from the VS Code API so Node tests cover them.
 */

/** The answer of the `glassllm/stats` request, for a document or a range of it. */
import { Language, MESSAGES } from './messages';
import { tokenizerName } from './tokenizers';

export interface Stats {
  tokens: number;
  chunks: number;
  characters: number;
  unknown: number;
  tokenizer: string;
  /** The same text's counts under each tokenizer of `glassllm.compareWith`. */
  compare?: ComparedStats[];
  /** Present when the tokenizer is a real model's. */
  model?: ModelStats;
  /** Present for a chat document: `tokens` is then its prompts' count, template included. */
  chat?: ChatStats;
}

/** What the server says of a chat document (a conversation, or a dataset of them). */
export interface ChatStats {
  count: number;
  /** Of `count`, the tokens the chat template added. */
  templateCount: number;
  conversations: number;
}

/** What the server says of a real model's tokenizer beside its counts. */
export interface ModelStats {
  kind: string;
  /** Whether special-token text in the document is read as the special token. */
  matchSpecialTokens: boolean;
  /** The tokens the model adds before and after a text, not counted in `tokens`. */
  around: { before: number[]; after: number[]; tokens: number };
}

export interface ComparedStats {
  tokenizer: string;
  tokens: number;
  chunks: number;
  unknown: number;
}


/** The `glassllm.locale` setting wins (null: unset); otherwise Portuguese when VS Code's UI language is. */
export function uiLanguage(localeSetting: string | null | undefined, vscodeLanguage: string): Language {
  const chosen = localeSetting || vscodeLanguage;
  return chosen.toLowerCase().startsWith('pt') ? 'pt' : 'en';
}


function numberFormat(language: Language, fractionDigits = 0): Intl.NumberFormat {
  return new Intl.NumberFormat(language === 'pt' ? 'pt-BR' : 'en-US', {
    minimumFractionDigits: fractionDigits,
    maximumFractionDigits: fractionDigits,
  });
}

function tokenCount(n: number, language: Language): string {
  const words = MESSAGES[language];
  return `${numberFormat(language).format(n)} ${n === 1 ? words.token : words.tokens}`;
}

/** Several selections count as their sum; they never overlap in VS Code. */
export function sumStats(parts: readonly Stats[]): Stats | undefined {
  if (parts.length === 0) {
    return undefined;
  }
  return parts.reduce((total, part) => ({
    tokens: total.tokens + part.tokens,
    chunks: total.chunks + part.chunks,
    characters: total.characters + part.characters,
    unknown: total.unknown + part.unknown,
    tokenizer: total.tokenizer,
    compare: (total.compare ?? []).map((compared, index) => ({
      ...compared,
      tokens: compared.tokens + (part.compare?.[index]?.tokens ?? 0),
      chunks: compared.chunks + (part.compare?.[index]?.chunks ?? 0),
      unknown: compared.unknown + (part.compare?.[index]?.unknown ?? 0),
    })),
  }));
}

/**
 * The status bar item's text: "1,234 tokens", or "12 / 1,234 tokens" while text is
 * selected ("1,234 tokens (87 from the template)" for a chat document), with a warning sign when the document has characters the tokenizer does not know.
 */
export function statusText(document: Stats, selection: Stats | undefined, language: Language): string {
  const format = numberFormat(language);
  const count = selection
    ? `${format.format(selection.tokens)} / ${tokenCount(document.tokens, language)}`
    : tokenCount(document.tokens, language);
  // A chat document's count is its prompt's: the template's share beside it.
  const template = document.chat && !selection
    ? ` (${format.format(document.chat.templateCount)} ${MESSAGES[language].fromTemplate})`
    : '';
  const unknown = document.unknown > 0 ? ` $(warning) ${format.format(document.unknown)}` : '';
  return `$(symbol-text) ${count}${template}${unknown}`;
}

function describe(stats: Stats, language: Language): string {
  const words = MESSAGES[language];
  const format = numberFormat(language);
  const parts = [
    tokenCount(stats.tokens, language),
    `${format.format(stats.chunks)} ${words.chunks}`,
    `${format.format(stats.characters)} ${words.characters}`,
  ];
  if (stats.tokens > 0) {
    parts.push(`${numberFormat(language, 1).format(stats.characters / stats.tokens)} ${words.perToken}`);
  }
  parts.push(`${format.format(stats.unknown)} ${words.unknown}`);
  return parts.join(' · ');
}

/** One line per compared tokenizer: "  en: 1,500 tokens · 3.2 chars/token · 0 unknown". */
function comparedLines(stats: Stats, language: Language): string[] {
  const words = MESSAGES[language];
  const format = numberFormat(language);
  return (stats.compare ?? []).map((compared) => {
    const parts = [tokenCount(compared.tokens, language)];
    if (compared.tokens > 0) {
      parts.push(`${numberFormat(language, 1).format(stats.characters / compared.tokens)} ${words.perToken}`);
    }
    parts.push(`${format.format(compared.unknown)} ${words.unknown}`);
    return `  ${tokenizerName(compared.tokenizer)}: ${parts.join(' · ')}`;
  });
}

/** The model's line: its format, how special-token text is read, what it adds around a text. */
function modelLine(model: ModelStats, language: Language): string {
  const words = MESSAGES[language];
  const parts = [model.kind, model.matchSpecialTokens ? words.specialsMatched : words.specialsOrdinary];
  if (model.around.tokens > 0) {
    parts.push(words.around(numberFormat(language).format(model.around.tokens), model.around.tokens === 1));
  }
  return `${words.model}: ${parts.join(' · ')}`;
}

/**
 * The hover text of the status bar item: every figure of the document and the selection,
 * each followed by the counts of the compared tokenizers.
 */
export function statusTooltip(document: Stats, selection: Stats | undefined, language: Language): string {
  const words = MESSAGES[language];
  const lines = [
    `GlassLLM · ${words.tokenizer} ${document.tokenizer}`,
    ...(document.model ? [modelLine(document.model, language)] : []),
    `${words.document}: ${describe(document, language)}`,
    ...comparedLines(document, language),
  ];
  if (selection) {
    lines.push(`${words.selection}: ${describe(selection, language)}`, ...comparedLines(selection, language));
  }
  lines.push(words.click);
  return lines.join('\n');
}
