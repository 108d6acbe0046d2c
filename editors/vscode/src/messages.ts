/** Every string the extension itself shows, in English and Portuguese (the server localizes its own). */

export type Language = 'pt' | 'en';

export const MESSAGES = {
  en: {
    token: 'token', tokens: 'tokens', chunks: 'chunks', characters: 'characters',
    perToken: 'chars/token', unknown: 'unknown', document: 'Document', selection: 'Selection',
    tokenizer: 'tokenizer', click: 'Click to choose the tokenizer.',
    statsFailed: 'GlassLLM could not count the tokens',
    packaged: 'packaged tokenizer',
    portuguese: 'Portuguese', english: 'English',
    fromFile: 'Tokenizer JSON file…',
    current: 'current',
    chooseTokenizer: 'Tokenizer for this workspace',
    tokenizerFiles: 'Tokenizer JSON',
    noEditor: 'GlassLLM: open a plain text or Markdown file first.',
    trainSource: 'Train on…',
    activeDocument: 'The active document',
    aFolder: 'The text files of a folder…',
    vocabSize: 'Vocabulary size (specials + alphabet + merges; an upper bound)',
    vocabSizeInvalid: 'A whole number from 5 up.',
    trainOutput: 'Save the trained tokenizer as',
    serverMissing: (command: string) =>
      `GlassLLM could not start the language server "${command}". Install glassllm ` +
      '(`python3 -m pip install .` in its folder) so that `glassllm-lsp` is on the PATH, or set `glassllm.server.path`.',
    openSettings: 'Open Settings',
  },
  pt: {
    token: 'token', tokens: 'tokens', chunks: 'trechos', characters: 'caracteres',
    perToken: 'caracteres/token', unknown: 'desconhecidos', document: 'Documento', selection: 'Seleção',
    tokenizer: 'tokenizador', click: 'Clique para escolher o tokenizador.',
    statsFailed: 'O GlassLLM não conseguiu contar os tokens',
    packaged: 'tokenizador incluído',
    portuguese: 'Português', english: 'Inglês',
    fromFile: 'Arquivo JSON de tokenizador…',
    current: 'atual',
    chooseTokenizer: 'Tokenizador deste espaço de trabalho',
    tokenizerFiles: 'Tokenizador JSON',
    noEditor: 'GlassLLM: abra primeiro um arquivo de texto ou Markdown.',
    trainSource: 'Treinar com…',
    activeDocument: 'O documento ativo',
    aFolder: 'Os arquivos de texto de uma pasta…',
    vocabSize: 'Tamanho do vocabulário (especiais + alfabeto + fusões; um limite superior)',
    vocabSizeInvalid: 'Um número inteiro a partir de 5.',
    trainOutput: 'Salvar o tokenizador treinado como',
    serverMissing: (command: string) =>
      `O GlassLLM não conseguiu iniciar o servidor de linguagem "${command}". Instale o glassllm ` +
      '(`python3 -m pip install .` na pasta dele) para que `glassllm-lsp` esteja no PATH, ou ajuste `glassllm.server.path`.',
    openSettings: 'Abrir configurações',
  },
} as const;
