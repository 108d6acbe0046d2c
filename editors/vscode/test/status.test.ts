import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BudgetStats, Stats, budgetState, statusText, statusTooltip, sumStats, uiLanguage } from '../src/status';

const documentStats: Stats = { tokens: 1234, chunks: 345, characters: 4812, unknown: 0, tokenizer: 'pt' };
const selectionStats: Stats = { tokens: 12, chunks: 4, characters: 41, unknown: 0, tokenizer: 'pt' };

describe('statusText', () => {
  it('shows the document count alone without a selection', () => {
    assert.equal(statusText(documentStats, undefined, 'en'), '$(symbol-text) 1,234 tokens');
  });

  it('shows the selection against the document', () => {
    assert.equal(statusText(documentStats, selectionStats, 'en'), '$(symbol-text) 12 / 1,234 tokens');
  });

  it('uses Portuguese digit grouping', () => {
    assert.equal(statusText(documentStats, selectionStats, 'pt'), '$(symbol-text) 12 / 1.234 tokens');
  });

  it('says token in the singular for one', () => {
    assert.equal(statusText({ ...documentStats, tokens: 1 }, undefined, 'en'), '$(symbol-text) 1 token');
  });

  it("gives a chat document's template share, in both languages", () => {
    const chat = { ...documentStats, chat: { count: 1234, templateCount: 87, conversations: 1 } };
    assert.equal(statusText(chat, undefined, 'en'), '$(symbol-text) 1,234 tokens (87 from the template)');
    assert.equal(statusText(chat, undefined, 'pt'), '$(symbol-text) 1.234 tokens (87 do modelo de chat)');
    assert.equal(statusText(chat, selectionStats, 'en'), '$(symbol-text) 12 / 1,234 tokens');
  });

  it('warns about unknown characters', () => {
    assert.equal(statusText({ ...documentStats, unknown: 3 }, undefined, 'en'), '$(symbol-text) 1,234 tokens $(warning) 3');
  });
});

describe('a token budget', () => {
  const budget: BudgetStats = {
    tokens: 3900, templateTokens: 0, maxTokens: 4096, unitsOver: 0, units: 1, severity: 'error', files: '**', tokenizer: 'Portuguese', source: 'settings',
  };

  it('shows its use instead of the count, in each language', () => {
    assert.equal(statusText({ ...documentStats, budget }, undefined, 'en'), '$(symbol-text) 3,900 / 4,096 tokens');
    assert.equal(statusText({ ...documentStats, budget }, undefined, 'pt'), '$(symbol-text) 3.900 / 4.096 tokens');
  });

  it('gives way to the selection count while text is selected', () => {
    assert.equal(statusText({ ...documentStats, budget }, selectionStats, 'en'), '$(symbol-text) 12 / 1,234 tokens');
  });

  it("on a chat document, gives the counted prompt's template share beside its use", () => {
    const chat = { count: 9000, templateCount: 400, conversations: 3 };
    const stats = { ...documentStats, chat, budget: { ...budget, templateTokens: 87 } };
    assert.equal(statusText(stats, undefined, 'en'), '$(symbol-text) 3,900 / 4,096 tokens (87 from the template)');
    assert.equal(statusText(stats, undefined, 'pt'), '$(symbol-text) 3.900 / 4.096 tokens (87 do modelo de chat)');
    assert.equal(statusText(stats, selectionStats, 'en'), '$(symbol-text) 12 / 1,234 tokens');
  });

  it('colours the item only over the budget, as its severity', () => {
    assert.equal(budgetState({ ...documentStats, budget }), undefined);
    assert.equal(budgetState({ ...documentStats, budget: { ...budget, tokens: 4100, unitsOver: 1 } }), 'error');
    assert.equal(budgetState({ ...documentStats, budget: { ...budget, unitsOver: 2, severity: 'warning' } }), 'warning');
  });

  it('names where it comes from in the tooltip, and a dataset\'s lines over it', () => {
    const dataset = { ...budget, units: 120, unitsOver: 3, source: '/work/pyproject.toml', files: 'data/*.jsonl' };
    const lines = (stats: Stats, language: 'en' | 'pt') => statusTooltip(stats, undefined, language).split('\n');
    assert.ok(lines({ ...documentStats, budget }, 'en').includes('Budget: 3,900 / 4,096 tokens (**, settings, Portuguese)'));
    assert.ok(
      lines({ ...documentStats, budget: dataset }, 'pt').includes(
        'Orçamento: 3.900 / 4.096 tokens (data/*.jsonl, /work/pyproject.toml, Portuguese) · 3 de 120 linhas acima (contada a maior)',
      ),
    );
  });
});

describe('statusTooltip', () => {
  it('gives every figure of the document and the selection in English', () => {
    assert.equal(
      statusTooltip(documentStats, selectionStats, 'en'),
      [
        'GlassLLM · tokenizer pt',
        'Document: 1,234 tokens · 345 chunks · 4,812 characters · 3.9 chars/token · 0 unknown',
        'Selection: 12 tokens · 4 chunks · 41 characters · 3.4 chars/token · 0 unknown',
        'Click to choose the tokenizer.',
      ].join('\n'),
    );
  });

  it('gives every figure in Portuguese', () => {
    assert.equal(
      statusTooltip(documentStats, undefined, 'pt'),
      [
        'GlassLLM · tokenizador pt',
        'Documento: 1.234 tokens · 345 trechos · 4.812 caracteres · 3,9 caracteres/token · 0 desconhecidos',
        'Clique para escolher o tokenizador.',
      ].join('\n'),
    );
  });

  it('follows each figure with the compared tokenizers', () => {
    const compare = [{ tokenizer: 'en', tokens: 1500, chunks: 345, unknown: 2 }];
    const file = [{ tokenizer: '/home/ana/tokenizers/legal.json', tokens: 16, chunks: 4, unknown: 0 }];
    assert.equal(
      statusTooltip({ ...documentStats, compare }, { ...selectionStats, compare: file }, 'en'),
      [
        'GlassLLM · tokenizer pt',
        'Document: 1,234 tokens · 345 chunks · 4,812 characters · 3.9 chars/token · 0 unknown',
        '  en: 1,500 tokens · 3.2 chars/token · 2 unknown',
        'Selection: 12 tokens · 4 chunks · 41 characters · 3.4 chars/token · 0 unknown',
        '  legal.json: 16 tokens · 2.6 chars/token · 0 unknown',
        'Click to choose the tokenizer.',
      ].join('\n'),
    );
    assert.match(statusTooltip({ ...documentStats, compare }, undefined, 'pt'), /^  en: 1\.500 tokens · 3,2 caracteres\/token · 2 desconhecidos$/m);
  });

  it('says what a real model is, how it reads special-token text and what it adds around the text', () => {
    const model = { kind: 'SentencePiece BPE', matchSpecialTokens: false, around: { before: [1], after: [], tokens: 1 } };
    const lines = statusTooltip({ ...documentStats, tokenizer: 'hf:mistralai/Mistral-7B-v0.1', model }, undefined, 'en').split('\n');
    assert.deepEqual(lines.slice(0, 2), [
      'GlassLLM · tokenizer hf:mistralai/Mistral-7B-v0.1',
      'Model: SentencePiece BPE · special-token text is ordinary text · 1 token added around the text, not counted',
    ]);
    const matched = { ...model, matchSpecialTokens: true, around: { before: [128000], after: [128001], tokens: 2 } };
    assert.equal(
      statusTooltip({ ...documentStats, model: matched }, undefined, 'pt').split('\n')[1],
      'Modelo: SentencePiece BPE · texto de token especial é lido como o token especial · 2 tokens acrescentados em volta do texto, fora da contagem',
    );
    const nothing = { ...model, around: { before: [], after: [], tokens: 0 } };
    assert.equal(statusTooltip({ ...documentStats, model: nothing }, undefined, 'en').split('\n')[1], 'Model: SentencePiece BPE · special-token text is ordinary text');
  });

  it('leaves out characters per token for an empty document', () => {
    const empty: Stats = { tokens: 0, chunks: 0, characters: 0, unknown: 0, tokenizer: 'en' };
    assert.match(statusTooltip(empty, undefined, 'en'), /^Document: 0 tokens · 0 chunks · 0 characters · 0 unknown$/m);
  });
});

describe('sumStats', () => {
  it('adds the selections up', () => {
    assert.deepEqual(sumStats([selectionStats, { ...selectionStats, tokens: 3, unknown: 1 }]), {
      tokens: 15, chunks: 8, characters: 82, unknown: 1, tokenizer: 'pt', compare: [],
    });
  });

  it('adds up the compared tokenizers too, tokenizer by tokenizer', () => {
    const part = (tokens: number) => ({ ...selectionStats, compare: [{ tokenizer: 'en', tokens, chunks: 4, unknown: 1 }] });
    assert.deepEqual(sumStats([part(5), part(7)])?.compare, [{ tokenizer: 'en', tokens: 12, chunks: 8, unknown: 2 }]);
  });

  it('has nothing to add without a selection', () => {
    assert.equal(sumStats([]), undefined);
  });
});

describe('uiLanguage', () => {
  it('follows VS Code when the setting is unset', () => {
    assert.equal(uiLanguage(null, 'pt-br'), 'pt');
    assert.equal(uiLanguage(undefined, 'pt-br'), 'pt');
    assert.equal(uiLanguage('', 'de'), 'en');
  });

  it('lets the setting override VS Code', () => {
    assert.equal(uiLanguage('en', 'pt-br'), 'en');
    assert.equal(uiLanguage('pt', 'en'), 'pt');
  });
});
