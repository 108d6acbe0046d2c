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
    fromFile: 'A tokenizer file…',
    fileFormats: 'glassllm JSON, Hugging Face tokenizer.json, Tekken JSON or SentencePiece .model',
    hfId: 'A Hugging Face model id…',
    hfIdFormat: 'hf:ORG/NAME, from the local Hugging Face cache (never downloaded)',
    hfIdPrompt: 'A model in the local Hugging Face cache (GlassLLM never downloads one): hf:ORG/NAME or hf:ORG/NAME@REVISION',
    hfIdInvalid: 'Expected hf:ORG/NAME or hf:ORG/NAME@REVISION, spelled as on the Hugging Face Hub (letters, digits, _ . -).',
    inHubCache: 'in the local Hugging Face cache',
    current: 'current',
    chooseTokenizer: 'Choose the tokenizer',
    tokenizerFiles: 'Tokenizer JSON',
    modelFiles: 'Tokenizer files',
    allFiles: 'All files',
    saveIn: 'Save the choice in',
    workspaceScope: 'Workspace settings',
    workspaceScopeDetail: 'This workspace only, shared with it.',
    userScope: 'User settings',
    userScopeDetail: 'Every workspace that does not choose its own.',
    overridden: (value: string) =>
      `GlassLLM: this workspace's own glassllm.tokenizer ("${value}") still applies here; it comes before the user setting.`,
    removeWorkspaceSetting: 'Remove the workspace setting',
    noEditor: 'GlassLLM: open a plain text or Markdown file first.',
    trainSource: 'Train on…',
    activeDocument: 'The active document',
    aFolder: 'The text files of a folder…',
    vocabSize: 'Vocabulary size (specials + alphabet + merges; an upper bound)',
    vocabSizeInvalid: 'A whole number from 5 up.',
    trainOutput: 'Save the trained tokenizer as',
    notFound: 'not found',
    failed: 'does not run',
    triedSetting: (key: string, command: string) => `the setting ${key} ("${command}")`,
    triedPythonExtension: (command: string) => `the Python extension's interpreter (${command})`,
    isVersion: (version: string) => `is ${version}`,
    noPython: (tried: string) =>
      `GlassLLM needs Python 3.11 or newer to run its language server. Tried: ${tried}. ` +
      'Install Python 3.11 or newer, or set the setting glassllm.server.python to one.',
    badPythonSetting: (tried: string) =>
      `GlassLLM needs Python 3.11 or newer to run its language server, and ${tried}. ` +
      'Set glassllm.server.python to one, or clear that setting to let the extension look for one.',
    noExternalServer: (tried: string) =>
      `GlassLLM could not start its language server: ${tried}. ` +
      'Clear the setting glassllm.server.path to use the server that comes with the extension, or set it to the full path of glassllm-lsp.',
    startFailed: 'GlassLLM could not start its language server; the GlassLLM output channel says why.',
    showOutput: 'Show Output',
    openSettings: 'Open Settings',
  },
  pt: {
    token: 'token', tokens: 'tokens', chunks: 'trechos', characters: 'caracteres',
    perToken: 'caracteres/token', unknown: 'desconhecidos', document: 'Documento', selection: 'Seleção',
    tokenizer: 'tokenizador', click: 'Clique para escolher o tokenizador.',
    statsFailed: 'O GlassLLM não conseguiu contar os tokens',
    packaged: 'tokenizador incluído',
    portuguese: 'Português', english: 'Inglês',
    fromFile: 'Um arquivo de tokenizador…',
    fileFormats: 'JSON do glassllm, tokenizer.json da Hugging Face, JSON Tekken ou .model do SentencePiece',
    hfId: 'Um id de modelo da Hugging Face…',
    hfIdFormat: 'hf:ORG/NOME, do cache local da Hugging Face (nunca baixado)',
    hfIdPrompt: 'Um modelo do cache local da Hugging Face (o GlassLLM nunca baixa nenhum): hf:ORG/NOME ou hf:ORG/NOME@REVISÃO',
    hfIdInvalid: 'Esperado hf:ORG/NOME ou hf:ORG/NOME@REVISÃO, escrito como no Hugging Face Hub (letras, dígitos, _ . -).',
    inHubCache: 'no cache local da Hugging Face',
    current: 'atual',
    chooseTokenizer: 'Escolha o tokenizador',
    tokenizerFiles: 'Tokenizador JSON',
    modelFiles: 'Arquivos de tokenizador',
    allFiles: 'Todos os arquivos',
    saveIn: 'Salvar a escolha em',
    workspaceScope: 'Configurações do espaço de trabalho',
    workspaceScopeDetail: 'Só neste espaço de trabalho, compartilhada com ele.',
    userScope: 'Configurações do usuário',
    userScopeDetail: 'Todo espaço de trabalho que não escolhe o seu.',
    overridden: (value: string) =>
      `GlassLLM: o glassllm.tokenizer próprio deste espaço de trabalho ("${value}") continua valendo aqui; ele vem antes da configuração do usuário.`,
    removeWorkspaceSetting: 'Remover a configuração do espaço de trabalho',
    noEditor: 'GlassLLM: abra primeiro um arquivo de texto ou Markdown.',
    trainSource: 'Treinar com…',
    activeDocument: 'O documento ativo',
    aFolder: 'Os arquivos de texto de uma pasta…',
    vocabSize: 'Tamanho do vocabulário (especiais + alfabeto + fusões; um limite superior)',
    vocabSizeInvalid: 'Um número inteiro a partir de 5.',
    trainOutput: 'Salvar o tokenizador treinado como',
    notFound: 'não encontrado',
    failed: 'não executa',
    triedSetting: (key: string, command: string) => `a configuração ${key} ("${command}")`,
    triedPythonExtension: (command: string) => `o interpretador da extensão Python (${command})`,
    isVersion: (version: string) => `é ${version}`,
    noPython: (tried: string) =>
      `O GlassLLM precisa de Python 3.11 ou mais novo para executar seu servidor de linguagem. Tentou: ${tried}. ` +
      'Instale Python 3.11 ou mais novo, ou aponte a configuração glassllm.server.python para um.',
    badPythonSetting: (tried: string) =>
      `O GlassLLM precisa de Python 3.11 ou mais novo para executar seu servidor de linguagem, e ${tried}. ` +
      'Aponte glassllm.server.python para um, ou limpe essa configuração para que a extensão procure um.',
    noExternalServer: (tried: string) =>
      `O GlassLLM não conseguiu iniciar seu servidor de linguagem: ${tried}. ` +
      'Limpe a configuração glassllm.server.path para usar o servidor que vem com a extensão, ou indique nela o caminho completo do glassllm-lsp.',
    startFailed: 'O GlassLLM não conseguiu iniciar seu servidor de linguagem; o canal de saída GlassLLM diz por quê.',
    showOutput: 'Mostrar saída',
    openSettings: 'Abrir configurações',
  },
} as const;
