"""Every user-facing string of the server, in English and Portuguese, in one catalogue.

Portuguese when the client's ``locale`` (from ``initialize``) starts with ``pt``, English
otherwise; the ``glassllm.locale`` setting overrides, and a client that sends no locale
(eglot) gets the server process's own (``LC_ALL``, ``LC_MESSAGES``, ``LANG``). Strings are ``str.format``
templates; numbers go through :func:`format_integer` / :func:`format_decimal`, since
Portuguese writes ``1.234`` and ``3,9`` where English writes ``1,234`` and ``3.9``.
To add a message, add one entry to :data:`CATALOGUE` with both languages.
No pygls here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, Literal

__all__ = [
    "CATALOGUE",
    "Locale",
    "Messages",
    "Say",
    "choose_locale",
    "environment_locale",
    "format_decimal",
    "format_integer",
]

Locale = Literal["en", "pt"]
# A catalogue lookup in the user's language, ``say("key", field=value) -> text``: a
# :class:`Messages` is one.
Say = Callable[..., str]

CATALOGUE: dict[str, dict[Locale, str]] = {
    # Tokenizer names
    "tokenizer.pt": {"en": "Portuguese", "pt": "português"},
    "tokenizer.en": {"en": "English", "pt": "inglês"},
    "tokenizer.file": {"en": "file {name}", "pt": "arquivo {name}"},
    # Hover
    "hover.index": {"en": "index {index} in the document", "pt": "índice {index} no documento"},
    "hover.index_pending": {
        "en": "index in the document: still counting the lines above",
        "pt": "índice no documento: ainda contando as linhas acima",
    },
    "hover.id": {"en": "ID {id}", "pt": "ID {id}"},
    "hover.at": {"en": "at {span}", "pt": "em {span}"},
    "hover.unknown": {
        "en": "not in the alphabet: `<unk>`, decoded as ⁇",
        "pt": "fora do alfabeto: `<unk>`, decodificado como ⁇",
    },
    "hover.chunk": {"en": "Chunk {chunk} → {pieces}", "pt": "Trecho {chunk} → {pieces}"},
    "hover.derivation": {"en": "Merges: {derivation}", "pt": "Fusões: {derivation}"},
    "hover.single": {"en": "A single character: no merges.", "pt": "Um único caractere: sem fusões."},
    "hover.tokenizer": {"en": "Tokenizer: {name}", "pt": "Tokenizador: {name}"},
    "hover.model": {
        "en": "{kind}; merges by {priority}: a real model ships no training counts",
        "pt": "{kind}; fusões por {priority}: um modelo real não traz contagens de treino",
    },
    "hover.method": {
        "en": "{kind}; no merges, each chunk is cut by {method}",
        "pt": "{kind}; sem fusões, cada trecho é cortado por {method}",
    },
    "hover.search": {"en": "How the model cut the chunk:", "pt": "Como o modelo cortou o trecho:"},
    "hover.priority.rank": {"en": "rank", "pt": "posição"},
    "hover.matched": {
        "en": "This token's text is matched whole, never built by merges.",
        "pt": "O texto deste token é reconhecido inteiro, nunca montado por fusões.",
    },
    "hover.priority.score": {"en": "score", "pt": "pontuação"},
    "hover.specials.ordinary": {
        "en": "special-token text in the document is ordinary text (glassllm.matchSpecialTokens: false)",
        "pt": "texto de token especial no documento é texto comum (glassllm.matchSpecialTokens: false)",
    },
    "hover.specials.matched": {
        "en": "special-token text in the document is read as the special token (glassllm.matchSpecialTokens: true)",
        "pt": "texto de token especial no documento é lido como o token especial (glassllm.matchSpecialTokens: true)",
    },
    "hover.around": {
        "en": "the model adds {before} before the text and {after} after it, not counted here",
        "pt": "o modelo acrescenta {before} antes do texto e {after} depois, fora desta contagem",
    },
    "hover.nothing": {"en": "nothing", "pt": "nada"},
    "hover.split": {
        "en": "The character {character} ({codepoint}) is split over {count} tokens, each covering it: {tokens}",
        "pt": "O caractere {character} ({codepoint}) está dividido em {count} tokens, e cada um o cobre: {tokens}",
    },
    "hover.explain": {
        "en": "Every merge step: the code action “Explain BPE merges” on a selection.",
        "pt": "Cada passo das fusões: a ação de código “Explicar fusões BPE” numa seleção.",
    },
    "hover.explain_search": {
        "en": "Every chunk's search in full: the code action “Explain BPE merges” on a selection.",
        "pt": "A busca de cada trecho por inteiro: a ação de código “Explicar fusões BPE” numa seleção.",
    },
    # Inlay hints
    "hint.tooltip": {"en": "{piece} · ID {id}", "pt": "{piece} · ID {id}"},
    # Code lens and the stats command
    "lens.count": {
        "en": "{tokens} {token_word} · {ratio} chars/token",
        "pt": "{tokens} {token_word} · {ratio} caracteres/token",
    },
    "lens.empty": {"en": "0 tokens", "pt": "0 tokens"},
    "word.token": {"en": "token", "pt": "token"},
    "word.tokens": {"en": "tokens", "pt": "tokens"},
    "stats.message": {
        "en": "{tokens} tokens, {chunks} chunks, {characters} characters, {unknown} unknown ({tokenizer})",
        "pt": "{tokens} tokens, {chunks} trechos, {characters} caracteres, {unknown} desconhecidos ({tokenizer})",
    },
    # Chat documents (a conversation through its model's chat template)
    "chat.lens": {
        "en": "{tokens} {token_word} ({template} from the template)",
        "pt": "{tokens} {token_word} ({template} do modelo de chat)",
    },
    "chat.hover": {
        "en": "token {index} of {count} of the prompt · message {message} ({role})",
        "pt": "token {index} de {count} do prompt · mensagem {message} ({role})",
    },
    "chat.hint": {
        "en": "The chat template inserts {tokens} {token_word} here: {pieces}",
        "pt": "O modelo de chat insere {tokens} {token_word} aqui: {pieces}",
    },
    "chat.part": {
        "en": "line {line} of the template, {text}: {tokens} {token_word}",
        "pt": "linha {line} do modelo de chat, {text}: {tokens} {token_word}",
    },
    "chat.part_inserted": {
        "en": "inserted by the format, {text}: {tokens} {token_word}",
        "pt": "inserido pelo formato, {text}: {tokens} {token_word}",
    },
    "chat.special": {
        "en": "Message {message} holds {piece}, which the template's tokenization reads as that special token "
        "(ID {id}): typed text that acts as markup (prompt injection)",
        "pt": "A mensagem {message} contém {piece}, que a tokenização do modelo de chat lê como esse token especial "
        "(ID {id}): texto digitado que age como marcação (injeção de prompt)",
    },
    "chat.double_bos": {
        "en": "The chat template writes {token} itself and the tokenizer's post-processor adds it too: tokenizing "
        "the rendered prompt with special tokens added puts it there twice",
        "pt": "O modelo de chat escreve {token} e o pós-processador do tokenizador também o acrescenta: tokenizar "
        "o prompt renderizado com tokens especiais acrescentados o põe duas vezes",
    },
    "chat.no_format": {
        "en": "glassllm: cannot use the chat template of {path}: {problem}. Chat documents are counted as plain text.",
        "pt": "glassllm: não é possível usar o modelo de chat de {path}: {problem}. Documentos de chat são contados "
        "como texto simples.",
    },
    "chat.template_failed": {
        "en": "glassllm: {problem}. What it could not render is counted as plain text.",
        "pt": "glassllm: {problem}. O que ele não pôde renderizar é contado como texto simples.",
    },
    # Token budgets
    "budget.over": {
        "en": "token {number} of {limit} — {over} over, {tokenizer}",
        "pt": "token {number} de {limit} — {over} a mais, {tokenizer}",
    },
    "budget.use": {"en": "{tokens} / {limit}", "pt": "{tokens} / {limit}"},
    "budget.tokenizer_broken": {
        "en": "glassllm: cannot count a budget with the tokenizer {path}: {problem}. That budget is not checked.",
        "pt": (
            "glassllm: não é possível contar um orçamento com o tokenizador {path}: {problem}."
            " Esse orçamento não é verificado."
        ),
    },
    "budget.repository_broken": {
        "en": "glassllm: {problem}. The repository's budgets are not checked until it is fixed.",
        "pt": "glassllm: {problem}. Os orçamentos do repositório não são verificados até que seja corrigido.",
    },
    # Settings and tokenizers
    "settings.invalid": {
        "en": "glassllm: invalid setting {key} = {value}: {expected}. Using the default.",
        "pt": "glassllm: configuração inválida {key} = {value}: {expected}. Usando o padrão.",
    },
    "settings.invalid_checked": {
        "en": "{problem}. Using the default.",
        "pt": "{problem}. Usando o padrão.",
    },
    "expected.boolean": {"en": "expected true or false", "pt": "esperado true ou false"},
    "expected.max_tokens": {
        "en": "expected a positive integer, or null for no budget",
        "pt": "esperado um inteiro positivo, ou null para nenhum orçamento",
    },
    "expected.budgets": {
        "en": 'expected a list of {"files": glob, "maxTokens": integer}',
        "pt": 'esperada uma lista de {"files": glob, "maxTokens": inteiro}',
    },
    "expected.tokenizer": {
        "en": 'expected "pt", "en" or the path of a tokenizer JSON file',
        "pt": 'esperado "pt", "en" ou o caminho de um arquivo JSON de tokenizador',
    },
    "expected.locale": {"en": 'expected "pt", "en" or null', "pt": 'esperado "pt", "en" ou null'},
    "expected.object": {
        "en": "expected an object of glassllm settings",
        "pt": "esperado um objeto com as configurações do glassllm",
    },
    "tokenizer.broken": {
        "en": "glassllm: cannot use the tokenizer {path}: {problem}. Still using {previous}.",
        "pt": "glassllm: não é possível usar o tokenizador {path}: {problem}. Continuo usando {previous}.",
    },
    # Errors
    "error.unknown_document": {
        "en": "Unknown document {uri}: the server has no open document with that URI (didOpen first).",
        "pt": "Documento desconhecido {uri}: o servidor não tem documento aberto com esse URI (didOpen antes).",
    },
    "error.invalid_params": {
        "en": "Invalid params for {method}: {detail}",
        "pt": "Parâmetros inválidos para {method}: {detail}",
    },
    "error.missing_params": {
        "en": "{method} needs params, and none were sent",
        "pt": "{method} precisa de params, e nenhum foi enviado",
    },
    "error.notification": {
        "en": "glassllm: internal error while handling a notification: {error}. Later errors go to the log only.",
        "pt": "glassllm: erro interno ao tratar uma notificação: {error}. Os próximos erros vão só para o log.",
    },
    # Explain BPE merges (the code action, the command and the page it writes)
    "explain.title": {"en": "Explain BPE merges", "pt": "Explicar fusões BPE"},
    "explain.header": {
        "en": "{document}, selection {span} · tokenizer: {tokenizer}",
        "pt": "{document}, seleção {span} · tokenizador: {tokenizer}",
    },
    "explain.header_at": {
        "en": "{document}, at {at} · tokenizer: {tokenizer}",
        "pt": "{document}, em {at} · tokenizador: {tokenizer}",
    },
    "explain.positions": {
        "en": "Positions are line:column, counted from 1 as editors show them; a span gives its first "
        "and last character, both included.",
        "pt": "Posições são linha:coluna, contadas a partir de 1 como os editores mostram; um intervalo "
        "dá o seu primeiro e o seu último caractere, ambos incluídos.",
    },
    "explain.empty": {
        "en": "Nothing to explain: the selection holds no text.",
        "pt": "Nada a explicar: a seleção não contém texto.",
    },
    "explain.summary": {"en": "Chunks: {chunks} · tokens: {tokens}", "pt": "Trechos: {chunks} · tokens: {tokens}"},
    "explain.truncated": {
        "en": "The selection touches {chunks} chunks; the first {shown} are explained.",
        "pt": "A seleção toca {chunks} trechos; os primeiros {shown} são explicados.",
    },
    "explain.cut": {
        "en": "The selection cuts a chunk. Merges never cross chunk boundaries, and part of a chunk "
        "tokenizes differently from the whole chunk, so every chunk the selection touches is explained whole.",
        "pt": "A seleção corta um trecho. As fusões nunca atravessam o limite de um trecho, e uma parte de "
        "um trecho é tokenizada de outro jeito que o trecho inteiro; por isso cada trecho que a seleção "
        "toca é explicado inteiro.",
    },
    "explain.chunk": {"en": "Chunk {number}: {chunk}", "pt": "Trecho {number}: {chunk}"},
    "explain.where": {"en": "At {span}.", "pt": "Em {span}."},
    "explain.chunk_cut": {
        "en": "The selection covers only {selected} of this chunk; on its own that would be {alone}.",
        "pt": "A seleção cobre só {selected} deste trecho; sozinho, isso seria {alone}.",
    },
    "explain.characters": {"en": "Characters", "pt": "Caracteres"},
    "explain.no_merges": {
        "en": "No merge applies: the characters are the tokens.",
        "pt": "Nenhuma fusão se aplica: os caracteres são os tokens.",
    },
    "explain.step": {
        "en": "rank {rank}: {left} + {right} → {result} ({evidence}); pieces now",
        "pt": "posição {rank}: {left} + {right} → {result} ({evidence}); peças agora",
    },
    "explain.count": {"en": "pair seen {count} times in training", "pt": "par visto {count} vezes no treino"},
    "explain.unknown_count": {
        "en": "training count not recorded in this tokenizer",
        "pt": "contagem do treino não registrada neste tokenizador",
    },
    "explain.no_counts": {
        "en": "a real model ships no training counts",
        "pt": "um modelo real não traz contagens de treino",
    },
    "explain.score": {"en": "piece score {score}", "pt": "pontuação da peça {score}"},
    "explain.tokens": {"en": "Tokens (ID)", "pt": "Tokens (ID)"},
    "explain.search": {
        "en": "This model does not merge; how it cut the chunk:",
        "pt": "Este modelo não faz fusões; como ele cortou o trecho:",
    },
    # Compare tokenizers (glassllm.compareWith: hover lines, the code action, the command's page)
    "compare.hover": {
        "en": "{tokenizer}: {pieces} — {count} {token_word}",
        "pt": "{tokenizer}: {pieces} — {count} {token_word}",
    },
    "compare.child_failed": {
        "en": (
            "glassllm: the separate process counting with {tokenizer} stopped ({problem}). It counts in the"
            " server's own process from now on, more slowly."
        ),
        "pt": (
            "glassllm: o processo à parte que conta com {tokenizer} parou ({problem}). A contagem passa a ser"
            " feita no próprio processo do servidor, mais devagar."
        ),
    },
    "compare.broken": {
        "en": "glassllm: cannot compare with the tokenizer {path}: {problem}. It is left out of the comparison.",
        "pt": "glassllm: não é possível comparar com o tokenizador {path}: {problem}. Ele fica fora da comparação.",
    },
    "expected.chat_template": {
        "en": 'expected "auto", "none" or the path of a chat template file',
        "pt": 'esperado "auto", "none" ou o caminho de um arquivo de modelo de chat',
    },
    "expected.compare_with": {
        "en": 'expected a list of "pt", "en" or paths of tokenizer JSON files ([] turns the comparison off)',
        "pt": 'esperada uma lista de "pt", "en" ou caminhos de arquivos JSON de tokenizador ([] desliga a comparação)',
    },
    "compare.title": {"en": "Compare tokenizers", "pt": "Comparar tokenizadores"},
    "compare.stats": {
        "en": "{tokenizer}: {tokens} tokens, {unknown} unknown",
        "pt": "{tokenizer}: {tokens} tokens, {unknown} desconhecidos",
    },
    "compare.header": {"en": "{document}, selection {span}", "pt": "{document}, seleção {span}"},
    "compare.header_at": {"en": "{document}, at {at}", "pt": "{document}, em {at}"},
    "compare.tokenizer": {"en": "Tokenizer", "pt": "Tokenizador"},
    "compare.tokens": {"en": "Tokens", "pt": "Tokens"},
    "compare.chunks": {"en": "Chunks", "pt": "Trechos"},
    "compare.unknown": {"en": "Unknown", "pt": "Desconhecidos"},
    "compare.ratio": {"en": "Characters/token", "pt": "Caracteres/token"},
    "compare.order": {
        "en": "{differing} of these {chunks} chunks tokenize differently; the most different come first.",
        "pt": "{differing} destes {chunks} trechos são tokenizados de modo diferente; os mais diferentes vêm primeiro.",
    },
    "compare.same": {
        "en": "Every tokenizer splits it the same way.",
        "pt": "Todos os tokenizadores o dividem do mesmo jeito.",
    },
    "compare.spread": {
        "en": "Token counts differ by up to {spread}.",
        "pt": "As contagens de tokens diferem em até {spread}.",
    },
    "compare.step": {"en": "rank {rank}", "pt": "posição {rank}"},
    "compare.seen": {"en": "seen {count} times", "pt": "visto {count} vezes"},
    # Open in browser (the code actions, the command and its messages)
    "browser.explain_title": {"en": "Explain BPE merges in a browser", "pt": "Explicar fusões BPE num navegador"},
    "browser.compare_title": {"en": "Compare tokenizers in a browser", "pt": "Comparar tokenizadores num navegador"},
    "browser.opened_nowhere": {
        "en": "glassllm: the page is in {path}; open that file in a browser to read it or hand it over.",
        "pt": "glassllm: a página está em {path}; abra esse arquivo num navegador para lê-la ou compartilhá-la.",
    },
    "browser.unwritable": {
        "en": "glassllm: cannot write the page to the cache folder {folder}: {problem}",
        "pt": "glassllm: não foi possível gravar a página na pasta de cache {folder}: {problem}",
    },
    # The token map of the workspace (glassllm.tokenMap)
    "map.title": {"en": "Token map of the workspace", "pt": "Mapa de tokens do espaço de trabalho"},
    "map.listing": {"en": "Listing the files of {folders}", "pt": "Listando os arquivos de {folders}"},
    "map.counting": {"en": "Counting {files} files", "pt": "Contando {files} arquivos"},
    "map.progress": {"en": "{done} of {total} bytes tokenized", "pt": "{done} de {total} bytes tokenizados"},
    "map.done": {
        "en": "Token map: {files} files, {tokens} tokens ({tokenizer}); {skipped} files not counted.",
        "pt": "Mapa de tokens: {files} arquivos, {tokens} tokens ({tokenizer}); {skipped} arquivos não contados.",
    },
    "map.cancelled": {"en": "Token map cancelled.", "pt": "Mapa de tokens cancelado."},
    "map.no_folder": {
        "en": "glassllm: no workspace folder is open: open a folder to map its tokens",
        "pt": "glassllm: nenhuma pasta aberta no espaço de trabalho: abra uma pasta para mapear os seus tokens",
    },
    "map.failed": {
        "en": "glassllm: cannot map the workspace's tokens: {problem}",
        "pt": "glassllm: não é possível mapear os tokens do espaço de trabalho: {problem}",
    },
    "map.stopped": {
        "en": "counting stopped (exit status {status})",
        "pt": "a contagem parou (código de saída {status})",
    },
    # Unknown characters (diagnostics)
    "unknown.one": {
        "en": "{characters} is not in the {tokenizer} tokenizer's alphabet: it becomes {unk} (id {id}) "
        "and decoding shows {shown}",
        "pt": "{characters} não está no alfabeto do tokenizador {tokenizer}: vira {unk} (id {id}) "
        "e a decodificação mostra {shown}",
    },
    "unknown.many": {
        "en": "{characters} are not in the {tokenizer} tokenizer's alphabet: they become {count} × {unk} "
        "(id {id}) and decoding shows {shown}",
        "pt": "{characters} não estão no alfabeto do tokenizador {tokenizer}: viram {count} × {unk} "
        "(id {id}) e a decodificação mostra {shown}",
    },
    "unknown.line_ending": {
        "en": "The line-ending character {characters} is not in the {tokenizer} tokenizer's alphabet: "
        "it becomes {unk} (id {id}) and decoding shows {shown}",
        "pt": "O caractere de fim de linha {characters} não está no alfabeto do tokenizador {tokenizer}: "
        "vira {unk} (id {id}) e a decodificação mostra {shown}",
    },
    "unknown.line_endings": {
        "en": "The line-ending character {characters} is not in the {tokenizer} tokenizer's alphabet: "
        "each of the {count} in this document becomes {unk} (id {id}) and decoding shows {shown}",
        "pt": "O caractere de fim de linha {characters} não está no alfabeto do tokenizador {tokenizer}: "
        "cada um dos {count} deste documento vira {unk} (id {id}) e a decodificação mostra {shown}",
    },
    # Training a tokenizer from the editor
    "train.title": {"en": "Training a tokenizer", "pt": "Treinando um tokenizador"},
    "train.reading": {"en": "Reading {source}", "pt": "Lendo {source}"},
    "train.progress": {"en": "{done} of {total} merges", "pt": "{done} de {total} fusões"},
    "train.done": {
        "en": "Trained {path}: {size} entries, {merges} merges, from {files} file(s) in {seconds} s.",
        "pt": "Treinado {path}: {size} entradas, {merges} fusões, de {files} arquivo(s) em {seconds} s.",
    },
    "train.offer": {
        "en": "{done} Use it in this workspace instead of {current}?",
        "pt": "{done} Usar neste espaço de trabalho em vez de {current}?",
    },
    "train.use": {"en": "Use it", "pt": "Usar"},
    "train.keep": {"en": "Keep the current one", "pt": "Manter o atual"},
    "train.switched": {
        "en": "glassllm now uses {path} until the tokenizer setting changes or the editor restarts. To keep it, "
        'set "glassllm.tokenizer": "{path}" in your editor\'s settings.',
        "pt": "O glassllm agora usa {path} até a configuração do tokenizador mudar ou o editor reiniciar. Para "
        'manter, defina "glassllm.tokenizer": "{path}" nas configurações do editor.',
    },
    "train.cancelled": {
        "en": "Training cancelled: {path} was not written.",
        "pt": "Treino cancelado: {path} não foi escrito.",
    },
    "train.failed": {
        "en": "glassllm: cannot train a tokenizer: {problem}",
        "pt": "glassllm: não é possível treinar um tokenizador: {problem}",
    },
    "train.replace": {
        "en": "Replace {path}? It is not a glassllm tokenizer file, and the trained tokenizer would take its place.",
        "pt": "Substituir {path}? Não é um arquivo de tokenizador do glassllm, e o tokenizador treinado "
        "tomaria o seu lugar.",
    },
    "train.not_utf8": {
        "en": "{path}: not UTF-8 text ({reason} at byte {byte})",
        "pt": "{path}: não é texto UTF-8 ({reason} no byte {byte})",
    },
    "train.no_text": {
        "en": "{path}: no text files to train on",
        "pt": "{path}: nenhum arquivo de texto para treinar",
    },
    "train.not_tokenizer": {
        "en": "{path} exists and is not a glassllm tokenizer file",
        "pt": "{path} existe e não é um arquivo de tokenizador do glassllm",
    },
    "train.not_file_uri": {"en": "{uri}: not a file URI", "pt": "{uri}: não é um URI de arquivo"},
    "train.stopped": {
        "en": "training stopped (exit status {status})",
        "pt": "o treino parou (código de saída {status})",
    },
    "train.replace_yes": {"en": "Replace", "pt": "Substituir"},
    "train.replace_no": {"en": "Keep the file", "pt": "Manter o arquivo"},
    "train.cannot_ask": {
        "en": "{path} exists and is not a glassllm tokenizer file, and the editor cannot be asked whether to "
        "replace it: choose another output path",
        "pt": "{path} existe e não é um arquivo de tokenizador do glassllm, e não é possível perguntar ao editor "
        "se deve substituí-lo: escolha outro caminho de saída",
    },
    "train.not_regular": {
        "en": "{path}: not a regular file or a folder",
        "pt": "{path}: não é um arquivo comum nem uma pasta",
    },
    # Over TCP, the server stays inside the workspace folders given when it started
    "path.outside": {
        "en": "glassllm: {path} is outside the workspace folders; over TCP, glassllm reads and writes only "
        "inside them ({folders})",
        "pt": "glassllm: {path} está fora das pastas do espaço de trabalho; via TCP, o glassllm só lê e escreve "
        "dentro delas ({folders})",
    },
    "tokenizer.outside": {
        "en": "it is outside the workspace folders, and over TCP glassllm reads tokenizer files only inside "
        "them ({folders})",
        "pt": "ele está fora das pastas do espaço de trabalho, e via TCP o glassllm só lê arquivos de "
        "tokenizador dentro delas ({folders})",
    },
    "tokenizer.hidden": {
        "en": "{path}: not a tokenizer file glassllm can use (over TCP, messages do not quote a file's content)",
        "pt": "{path}: não é um arquivo de tokenizador que o glassllm possa usar (via TCP, as mensagens não "
        "citam o conteúdo de um arquivo)",
    },
    "tokenizer.hidden_at": {
        "en": "{path}: not a tokenizer file glassllm can use: {place} is not valid (over TCP, messages do not "
        "quote a file's content)",
        "pt": "{path}: não é um arquivo de tokenizador que o glassllm possa usar: {place} não é válido (via TCP, "
        "as mensagens não citam o conteúdo de um arquivo)",
    },
    "tcp.busy": {
        "en": "this glassllm-lsp serves one client, and one is connected: start another `glassllm-lsp --tcp` "
        "on another port for this client",
        "pt": "este glassllm-lsp atende um cliente, e há um conectado: inicie outro `glassllm-lsp --tcp` "
        "em outra porta para este cliente",
    },
}


def environment_locale(environment: Mapping[str, str]) -> str | None:
    """The locale a POSIX program uses for its messages: the first of ``LC_ALL``,
    ``LC_MESSAGES`` and ``LANG`` that is set and not empty (``pt_BR.UTF-8``), else None."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if environment.get(name):
            return environment[name]
    return None


def choose_locale(
    client_locale: str | None, setting: str | None, environment: Mapping[str, str] | None = None
) -> Locale:
    """The language to speak: the setting if given, else the client's, else the one the
    environment names (the server process's by default), else English."""
    chosen = setting or client_locale or environment_locale(os.environ if environment is None else environment) or ""
    return "pt" if chosen.lower().startswith("pt") else "en"


def format_integer(value: int, locale: Locale) -> str:
    """``1234`` → ``"1,234"`` in English, ``"1.234"`` in Portuguese."""
    text = f"{value:,}"
    return text.replace(",", ".") if locale == "pt" else text


def format_decimal(value: float, locale: Locale, digits: int = 1) -> str:
    """``3.94`` → ``"3.9"`` in English, ``"3,9"`` in Portuguese (thousands grouped)."""
    text = f"{value:,.{digits}f}"
    if locale == "pt":
        return text.replace(",", "\0").replace(".", ",").replace("\0", ".")
    return text


class Messages:
    """The catalogue in one language: ``messages("hover.id", id=5)``."""

    def __init__(self, locale: Locale) -> None:
        self.locale: Locale = locale

    def __call__(self, name: str, /, **fields: Any) -> str:
        return CATALOGUE[name][self.locale].format(**fields)

    def integer(self, value: int) -> str:
        return format_integer(value, self.locale)

    def decimal(self, value: float, digits: int = 1) -> str:
        return format_decimal(value, self.locale, digits)
