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
  /** Present for a whole document that a token budget applies to. */
  budget?: BudgetStats;
}

/** What the server says of a chat document (a conversation, or a dataset of them). */
export interface ChatStats {
  count: number;
  /** Of `count`, the tokens the chat template added. */
  templateCount: number;
  conversations: number;
}

/** A document's use of its token budget (glassllm.maxTokens, glassllm.budgets or the repository's). */
export interface BudgetStats {
  /** The count it is checked against: the document's, or a dataset's largest line's. */
  tokens: number;
  /** Of `tokens`, what a chat template added (0 for plain text). */
  templateTokens: number;
  maxTokens: number;
  /** How many units (the document, or a dataset's lines) are over, of how many. */
  unitsOver: number;
  units: number;
  severity: 'error' | 'warning';
  files: string;
  /** The tokenizer it counts with, in words. */
  tokenizer: string;
  /** "settings", or the configuration file it comes from. */
  source: string;
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
 * The status bar item's text: "1,234 tokens", "3,900 / 4,096 tokens" when a token budget
 * applies, or "12 / 1,234 tokens" while text is selected; a chat document's with the
 * template's share ("3,900 / 4,096 tokens (87 from the template)"); with a warning sign
 * when the document has characters the tokenizer does not know.
 */
export function statusText(document: Stats, selection: Stats | undefined, language: Language): string {
  const format = numberFormat(language);
  const budget = document.budget;
  let count = tokenCount(document.tokens, language);
  if (selection) {
    count = `${format.format(selection.tokens)} / ${count}`;
  } else if (budget) {
    count = `${format.format(budget.tokens)} / ${format.format(budget.maxTokens)} ${MESSAGES[language].tokens}`;
  }
  // A chat document's count is its prompts': the template's share beside it (the
  // budget's unit's when a budget applies).
  const share = budget ? budget.templateTokens : document.chat?.templateCount;
  const template = document.chat && !selection
    ? ` (${format.format(share ?? 0)} ${MESSAGES[language].fromTemplate})`
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

/** How far over its budget the document is: undefined under it, else the budget's severity. */
export function budgetState(document: Stats): 'error' | 'warning' | undefined {
  const budget = document.budget;
  return budget && budget.unitsOver > 0 ? budget.severity : undefined;
}

/** "Budget: 3,900 / 4,096 tokens (**, settings, Portuguese)", with the lines over it for a dataset. */
function budgetLine(budget: BudgetStats, language: Language): string {
  const words = MESSAGES[language];
  const format = numberFormat(language);
  const use = `${format.format(budget.tokens)} / ${format.format(budget.maxTokens)} ${words.tokens}`;
  const source = budget.source === 'settings' ? words.budgetSettings : budget.source;
  const over = budget.units > 1 ? ` · ${words.unitsOver(format.format(budget.unitsOver), format.format(budget.units))}` : '';
  return `${words.budget}: ${use} (${budget.files}, ${source}, ${budget.tokenizer})${over}`;
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
    ...(document.budget ? [budgetLine(document.budget, language)] : []),
  ];
  if (selection) {
    lines.push(`${words.selection}: ${describe(selection, language)}`, ...comparedLines(selection, language));
  }
  lines.push(words.click);
  return lines.join('\n');
}
