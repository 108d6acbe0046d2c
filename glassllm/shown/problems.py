"""What the library says went wrong, worded for a person in English or Portuguese.

An error the library raises for bad input keeps its documented type and its English
message (``str(error)``, which the reference documents and scripts may match), and
carries a :class:`Problem`: a code and the fields of its message. :func:`describe` words
the error again in the reader's language, so the command line and the language server
can tell a Portuguese user in Portuguese that their tokenizer file is broken::

    >>> from glassllm import packaged
    >>> try:
    ...     packaged("de")
    ... except ValueError as error:
    ...     print(describe(error, "pt"))
    não há tokenizador empacotado 'de'; os empacotados são pt, en

An error without a problem (one the library did not word) is described by its own
message, in English.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

__all__ = [
    "MESSAGES",
    "Locale",
    "Problem",
    "describe",
    "environment_locale",
    "number_pt",
    "problem",
    "what_pt",
    "with_problem",
]

Locale = Literal["en", "pt"]

_E = TypeVar("_E", bound=BaseException)

# code → (English, Portuguese). The English text is the exception's own message.
MESSAGES: dict[str, tuple[str, str]] = {
    "packaged.unknown": (
        "no packaged tokenizer {name!r}; the packaged ones are {names}",
        "não há tokenizador empacotado {name!r}; os empacotados são {names}",
    ),
    "file.unreadable": (
        "cannot read {what}: {reason}",
        "não foi possível ler o {what_pt} {path}: {reason_pt}",
    ),
    "file.unwritable": (
        "cannot write {what}: {reason}",
        "não foi possível gravar o {what_pt} {path}: {reason_pt}",
    ),
    "file.not_utf8": (
        "{path}: not UTF-8 text ({reason} at byte {byte})",
        "{path}: não é texto UTF-8 ({reason} no byte {byte})",
    ),
    "file.not_json": (
        "{path}: not valid JSON: {reason}",
        "{path}: não é JSON válido: {reason} (linha {line}, coluna {column})",
    ),
    "file.not_regular": ("{path}: not a regular file", "{path}: não é um arquivo comum"),
    "file.empty_pipe": (
        "{path}: not a regular file (a pipe with nothing written to it)",
        "{path}: não é um arquivo comum (um pipe em que nada foi escrito)",
    ),
    "file.silent_pipe": (
        "{path}: a pipe that sent nothing for {seconds:g} s",
        "{path}: um pipe que não enviou nada por {seconds:g} s",
    ),
    "file.too_large": (
        "{path}: larger than the {megabytes} MB a {what} may have",
        "{path}: maior que os {megabytes} MB que um {what_pt} pode ter",
    ),
    "file.entries": (
        "{path}: {entries:,} vocabulary entries, more than the {limit:,} a tokenizer may have",
        "{path}: {entries_pt} entradas de vocabulário, mais que as {limit_pt} que um tokenizador pode ter",
    ),
    "file.json_values": (
        "{path}: too many JSON values for a tokenizer file ({count:,} commas, colons and brackets, at most {limit:,})",
        "{path}: valores JSON demais para um arquivo de tokenizador ({count_pt} vírgulas, dois-pontos e colchetes,"
        " no máximo {limit_pt})",
    ),
    "file.nested": ("{path}: not valid JSON (nested too deeply)", "{path}: não é JSON válido (aninhado fundo demais)"),
    "file.long_number": (
        "{path}: not valid JSON (a number of more than {digits:,} digits)",
        "{path}: não é JSON válido (um número de mais de {digits_pt} dígitos)",
    ),
    "file.surrogate": (
        "{path}: alphabet[{position}] is a lone surrogate (U+{code:04X}), not a character",
        "{path}: alphabet[{position}] é um surrogate isolado (U+{code:04X}), não um caractere",
    ),
    "file.unencodable": (
        "{path}: cannot write {what}: surrogates not allowed (U+{code:04X})",
        "{path}: não foi possível gravar o {what_pt}: UTF-8 não representa um surrogate isolado (U+{code:04X})",
    ),
    "file.not_object": (
        "{path}: expected a JSON object, found {found}",
        "{path}: esperava um objeto JSON, encontrou {found}",
    ),
    "file.missing_key": ("{path}: missing key {key!r}", "{path}: falta a chave {key!r}"),
    "file.version": (
        "{path}: unknown version {version!r} (this glassllm reads version {expected})",
        "{path}: versão desconhecida {version!r} (este glassllm lê a versão {expected})",
    ),
    "file.not_list": (
        "{path}: {key!r} must be a list, found {found}",
        "{path}: {key!r} deve ser uma lista, encontrou {found}",
    ),
    "file.symbol": (
        "{path}: alphabet[{position}] must be one character, found {found!r}",
        "{path}: alphabet[{position}] deve ser um caractere, encontrou {found!r}",
    ),
    "file.duplicate": (
        "{path}: alphabet[{position}] {symbol!r} is a duplicate",
        "{path}: alphabet[{position}] {symbol!r} está repetido",
    ),
    "file.pair": (
        "{path}: merges[{rank}] must be a pair of non-empty strings, found {found!r}",
        "{path}: merges[{rank}] deve ser um par de strings não vazias, encontrou {found!r}",
    ),
    "file.pair_unknown": (
        "{path}: merges[{rank}] {pair!r} uses {part!r}, which is not in the vocabulary before that merge",
        "{path}: merges[{rank}] {pair!r} usa {part!r}, que não está no vocabulário antes dessa fusão",
    ),
    "file.counts": (
        "{path}: 'merge_counts' must be a list with one count per merge ({merges})",
        "{path}: 'merge_counts' deve ser uma lista com uma contagem por fusão ({merges})",
    ),
    "file.count": (
        "{path}: merge_counts[{rank}] must be a non-negative integer, found {found!r}",
        "{path}: merge_counts[{rank}] deve ser um inteiro não negativo, encontrou {found!r}",
    ),
    "train.vocab_size": (
        "vocab_size {vocab_size} cannot hold the {specials} special tokens and the "
        "{alphabet}-character alphabet of this text: at least {needed} is needed",
        "vocab_size {vocab_size} não comporta os {specials} tokens especiais e o alfabeto de "
        "{alphabet} caracteres deste texto: são precisos pelo menos {needed}",
    ),
    "train.chunk": (
        "chunk counts: every chunk must be a non-empty str, found {chunk!r}",
        "contagens de trechos: todo trecho deve ser uma str não vazia, encontrou {chunk!r}",
    ),
    "train.surrogate": (
        "the text holds a lone surrogate (U+{code:04X}) at offset {offset}, which is not a character: "
        "Unicode text has none, and a tokenizer file could not store it",
        "o texto tem um surrogate isolado (U+{code:04X}) na posição {offset}, que não é um caractere: "
        "texto Unicode não tem nenhum, e um arquivo de tokenizador não poderia guardá-lo",
    ),
    "train.chunk_surrogate": (
        "chunk counts: the chunk {chunk!r} holds a lone surrogate (U+{code:04X}) at offset {offset}, "
        "which is not a character: Unicode text has none, and a tokenizer file could not store it",
        "contagens de trechos: o trecho {chunk!r} tem um surrogate isolado (U+{code:04X}) na posição "
        "{offset}, que não é um caractere: texto Unicode não tem nenhum, e um arquivo de tokenizador "
        "não poderia guardá-lo",
    ),
    "train.count": (
        "chunk counts: {chunk!r} has count {count!r}, expected a positive integer",
        "contagens de trechos: {chunk!r} tem contagem {count!r}, esperava um inteiro positivo",
    ),
    "count.jobs": ("jobs must be at least 1, got {jobs}", "jobs deve ser pelo menos 1, veio {jobs}"),
    # Counts files (glassllm.training.counts_files).
    "counts.line": (
        "{path}:{line}: expected [chunk, count], found {found!r}",
        "{path}:{line}: esperava [trecho, contagem], encontrou {found!r}",
    ),
    "counts.chunk": (
        "{path}:{line}: a chunk must be a non-empty string, found {chunk!r}",
        "{path}:{line}: um trecho deve ser uma string não vazia, encontrou {chunk!r}",
    ),
    "counts.count": (
        "{path}:{line}: {chunk!r} has count {count!r}, expected a positive integer",
        "{path}:{line}: {chunk!r} tem contagem {count!r}, esperava um inteiro positivo",
    ),
    "counts.not_utf8": ("{path}: not UTF-8 text ({reason})", "{path}: não é texto UTF-8 ({reason})"),
    "counts.not_counts": (
        "{path}: not a glassllm counts file (its first line is not a counts stamp)",
        "{path}: não é um arquivo de contagens do glassllm (a primeira linha não é um carimbo de contagens)",
    ),
    "counts.format": (
        "{path}: counts format {found!r}; this glassllm reads format {expected}",
        "{path}: formato de contagens {found!r}; este glassllm lê o formato {expected}",
    ),
    "counts.rule": (
        "{path}: counted with another normalization or chunk rule ({found!r}, this glassllm has {expected!r}), "
        "so its chunks are not the ones the tokenizer will see; count the corpus again",
        "{path}: contado com outra normalização ou regra de trechos ({found!r}, este glassllm tem {expected!r}), "
        "então os trechos dele não são os que o tokenizador verá; conte o corpus de novo",
    ),
    "counts.version": (
        "{path}: counted by glassllm {found!r}, this is glassllm {expected!r}; "
        "count the corpus again with this version",
        "{path}: contado pelo glassllm {found!r}, este é o glassllm {expected!r}; "
        "conte o corpus de novo com esta versão",
    ),
    # Corpora (glassllm.training.corpus). "no corpus file…" are the strerror of a FileNotFoundError,
    # which names the path itself.
    "corpus.no_match": (
        "no corpus file matches this pattern",
        "{path}: nenhum arquivo do corpus corresponde a este padrão",
    ),
    "corpus.empty_folder": ("no corpus file in this folder", "{path}: nenhum arquivo do corpus nesta pasta"),
    "corpus.empty_url": ("no corpus file at this URL", "{path}: nenhum arquivo do corpus nesta URL"),
    "corpus.field_needed": (
        "{path}: a {kind} file needs the field that holds the text (--field text)",
        "{path}: um arquivo {kind} precisa do campo que contém o texto (--field text)",
    ),
    "corpus.no_field": (
        "{path}: no field {field!r} (its fields: {fields})",
        "{path}: não há o campo {field!r} (os campos dele: {fields})",
    ),
    "corpus.not_utf8": ("{path}:{line}: not UTF-8 text ({reason})", "{path}:{line}: não é texto UTF-8 ({reason})"),
    "corpus.not_json": (
        "{path}:{line}: not a JSON record ({reason})",
        "{path}:{line}: não é um registro JSON ({reason})",
    ),
    "corpus.record_field": (
        "{path}:{line}: the record has no field {field!r}",
        "{path}:{line}: o registro não tem o campo {field!r}",
    ),
    "corpus.not_text": (
        "{path}:{line}: field {field!r} holds {found}, not text",
        "{path}:{line}: o campo {field!r} contém {found}, não texto",
    ),
    "corpus.column_not_text": (
        "{path}: field {field!r} holds {found}, not text",
        "{path}: o campo {field!r} contém {found}, não texto",
    ),
    "corpus.null": (
        "{path}: row {row}: field {field!r} is missing (null)",
        "{path}: linha {row}: falta o campo {field!r} (null)",
    ),
    "corpus.row_not_utf8": ("{path}: row {row}: not UTF-8 text", "{path}: linha {row}: não é texto UTF-8"),
    # Token budgets (glassllm.budgets) and ``glassllm tokens`` (glassllm.file_tokens).
    "budgets.toml": ("{path}: not valid TOML ({reason})", "{path}: não é TOML válido ({reason})"),
    "budgets.not_table": (
        "{path}: {key} must be a table, found {found}",
        "{path}: {key} deve ser uma tabela, encontrou {found}",
    ),
    "budgets.list": (
        "{path}: {key} must be a list of tables, found {found}",
        "{path}: {key} deve ser uma lista de tabelas, encontrou {found}",
    ),
    "budgets.unknown_key": (
        "{path}: unknown key {key!r} in {where} (known: {known})",
        "{path}: chave desconhecida {key!r} em {where} (as conhecidas: {known})",
    ),
    "budgets.unknown_top_key": (
        "{path}: unknown key {key!r} (known: {known})",
        "{path}: chave desconhecida {key!r} (as conhecidas: {known})",
    ),
    "budgets.missing": ("{path}: {key} is missing", "{path}: falta {key}"),
    "budgets.max_tokens": (
        "{path}: {key} must be a positive integer, found {found!r}",
        "{path}: {key} deve ser um inteiro positivo, encontrou {found!r}",
    ),
    "budgets.string": (
        "{path}: {key} must be a non-empty string, found {found!r}",
        "{path}: {key} deve ser uma string não vazia, encontrou {found!r}",
    ),
    "budgets.severity": (
        "{path}: {key} must be 'warning' or 'error', found {found!r}",
        "{path}: {key} deve ser 'warning' ou 'error', encontrou {found!r}",
    ),
    "tokens.skipped": ("{path}: skipped: {reason}", "{path}: não contado: {reason_pt}"),
    "tokens.over_file": (
        "{path}: {tokens:,} tokens, {over:,} over the budget of {limit:,} for {budget} ({tokenizer})",
        "{path}: {tokens_pt} tokens, {over_pt} acima do orçamento de {limit_pt} para {budget} ({tokenizer})",
    ),
    "tokens.warn_file": (
        "warning: {path}: {tokens:,} tokens, {over:,} over the budget of {limit:,} for {budget} ({tokenizer})",
        "aviso: {path}: {tokens_pt} tokens, {over_pt} acima do orçamento de {limit_pt} para {budget} ({tokenizer})",
    ),
    "tokens.own_no_chat": (
        "{path}: glassllm's own tokenizer has no chat template",
        "{path}: o tokenizador do próprio glassllm não tem modelo de chat",
    ),
    "tokens.chat_as_text": (
        "{files} chat files counted as text with {tokenizer}, which has no chat format: {reason}",
        "{files} arquivos de chat contados como texto com {tokenizer}, que não tem formato de chat: {reason}",
    ),
    "tokens.over": (
        "files over their budget: {files}",
        "arquivos acima do orçamento: {files}",
    ),
    "tokens.unreadable": (
        "paths that could not be read, so their tokens were not counted: {files}",
        "caminhos que não puderam ser lidos, então seus tokens não foram contados: {files}",
    ),
    "budgets.no_table": (
        "{path}: no [tool.glassllm] table to read budgets from",
        "{path}: não há tabela [tool.glassllm] de onde ler orçamentos",
    ),
    "tokens.git_warning": ("{path}: git: {line}", "{path}: o git diz: {line}"),
    "tokens.no_match": ("{path}: no file matches this pattern", "{path}: nenhum arquivo corresponde a este padrão"),
    # What installs an optional dependency (glassllm.training.optional).
    "optional.dask": (
        'counting on Dask needs Dask: pip install "glassllm[dask]"',
        'contar no Dask requer o Dask: pip install "glassllm[dask]"',
    ),
    "optional.parquet": (
        '{path}: reading Parquet needs pyarrow: pip install "glassllm[parquet]"',
        '{path}: ler Parquet requer o pyarrow: pip install "glassllm[parquet]"',
    ),
    "optional.zstd": (
        'reading or writing .zst needs zstandard: pip install "glassllm[zstd]"',
        'ler ou gravar .zst requer o zstandard: pip install "glassllm[zstd]"',
    ),
    "optional.urls": (
        "{path}: reading URLs needs fsspec (pip install fsspec)",
        "{path}: ler URLs requer o fsspec (pip install fsspec)",
    ),
    # Real models' tokenizers (glassllm.formats).
    "model.unknown_file": (
        "{path}: not a tokenizer file: expected {expected}",
        "{path}: não é um arquivo de tokenizador: esperava {expected_pt}",
    ),
    "model.not_bpe": (
        "{path}: not a BPE model ({found}); glassllm reads BPE models"
        " (and WordPiece, WordLevel, Unigram tokenizer.json, SentencePiece Unigram .model)",
        "{path}: não é um modelo BPE ({found}); o glassllm lê modelos BPE"
        " (e tokenizer.json WordPiece, WordLevel, Unigram, .model Unigram do SentencePiece)",
    ),
    "hub.absent": (
        "{spec}: {repo} is not in the local Hugging Face cache ({cache}); glassllm never downloads: "
        "fetch it once with `hf download {repo} tokenizer.json` (or point HF_HUB_CACHE at the cache that has it)",
        "{spec}: {repo} não está no cache local da Hugging Face ({cache}); o glassllm nunca baixa nada: "
        "baixe-o uma vez com `hf download {repo} tokenizer.json` (ou aponte HF_HUB_CACHE para o cache que o tem)",
    ),
    "hub.revision": (
        "{spec}: revision {revision!r} of {repo} is not in the local cache ({folder})",
        "{spec}: a revisão {revision!r} de {repo} não está no cache local ({folder})",
    ),
    "hub.no_file": (
        "{spec}: the cached {repo} ({snapshot}) has none of {files}",
        "{spec}: o {repo} do cache ({snapshot}) não tem nenhum de {files}",
    ),
    # The command line's own refusals.
    "cli.replace": (
        "{path} exists and is not a {kind} tokenizer file; not replacing it (--force replaces it)",
        "{path} existe e não é um arquivo de tokenizador {kind_pt}; não foi substituído (--force o substitui)",
    ),
    "cli.twice": (
        "{names} is given twice: each tokenizer is compared once",
        "{names} foi dado duas vezes: cada tokenizador é comparado uma vez",
    ),
    "cli.ids": (
        "token IDs must be integers ({reason})",
        "os IDs de token devem ser inteiros ({reason})",
    ),
    "load.own_only": (
        "{name} is a {kind} model's tokenizer: the HTML pages and export take glassllm's own only (the "
        "command line, the library and the language server show real models' too)",
        "{name} é o tokenizador de um modelo {kind}: as páginas HTML e o export aceitam só os do glassllm (a "
        "linha de comando, a biblioteca e o servidor de linguagem mostram também os de modelos reais)",
    ),
    "cli.range": (
        "IDs out of range for {size} entries (0 to {last}): {bad}",
        "IDs fora do intervalo para {size} entradas (0 a {last}): {bad}",
    ),
    "cli.stdin_utf8": (
        "standard input is not UTF-8 text (byte 0x{byte:02x} at offset {offset})",
        "a entrada padrão não é texto UTF-8 (byte 0x{byte:02x} na posição {offset})",
    ),
    "cli.argument_utf8": (
        "the text argument is not UTF-8 text (byte 0x{byte:02x} at offset {offset})",
        "o argumento de texto não é texto UTF-8 (byte 0x{byte:02x} na posição {offset})",
    ),
    "cli.file_utf8": (
        "{path}: not UTF-8 text (byte 0x{byte:02x} at offset {offset})",
        "{path}: não é texto UTF-8 (byte 0x{byte:02x} na posição {offset})",
    ),
    "cli.no_corpus": (
        "name corpus files, counts files (--counts), or both",
        "indique arquivos do corpus, arquivos de contagens (--counts) ou ambos",
    ),
    "cli.replace_counts": (
        "{path} exists and is not a counts file this glassllm reads; not replacing it (--force replaces it)",
        "{path} existe e não é um arquivo de contagens que este glassllm lê; não foi substituído (--force o substitui)",
    ),
    "cli.output_folder": ("cannot write {path}: it is a folder", "não é possível gravar {path}: é uma pasta"),
    "cli.output_no_folder": (
        "cannot write {path}: there is no folder {folder}",
        "não é possível gravar {path}: não existe a pasta {folder}",
    ),
    "cli.empty_corpus": (
        "{corpus}: no text to learn from; {output} is left as it was",
        "{corpus}: não há texto para aprender; {output} ficou como estava",
    ),
    # Conversations and chat templates (glassllm.chat).
    "chat.changed": (
        "message {message}: the template changes its content as it writes it; its tokens count as the template's",
        "mensagem {message}: o modelo de chat muda o conteúdo dela ao escrevê-lo; os tokens dele contam como do "
        "modelo de chat",
    ),
    "chat.injection": (
        "message {message}: its content holds {piece} at offset {start}, which the template's tokenization reads "
        "as the special token: typed text that acts as markup (prompt injection)",
        "mensagem {message}: o conteúdo dela contém {piece} na posição {start}, que a tokenização do modelo de chat "
        "lê como o token especial: texto digitado que age como marcação (injeção de prompt)",
    ),
    "chat.double_bos": (
        "the template writes {names} itself and the tokenizer's post-processor adds it too: tokenize the rendered "
        "prompt without special tokens added (add_special_tokens=False), or it is there twice",
        "o modelo de chat escreve {names} ele mesmo e o pós-processador do tokenizador também o acrescenta: "
        "tokenize o prompt renderizado sem acrescentar tokens especiais (add_special_tokens=False), ou ele aparece "
        "duas vezes",
    ),
    "chat.not_json": ("{where}: not valid JSON ({reason})", "{where}: não é JSON válido ({reason})"),
    "chat.not_utf8": (
        "{where}: not UTF-8 text (byte {byte} of the line)",
        "{where}: não é texto UTF-8 (byte {byte} da linha)",
    ),
    "chat.no_messages": (
        "{where}: a conversation object needs a 'messages' field",
        "{where}: um objeto de conversa precisa do campo 'messages'",
    ),
    "chat.not_messages": (
        "{where}: expected a conversation (a non-empty list of messages, or an object with 'messages'), found {found}",
        "{where}: esperava uma conversa (uma lista não vazia de mensagens, ou um objeto com 'messages'), "
        "encontrou {found_pt}",
    ),
    "chat.field": (
        "{where}: {field} must be {expected}, found {found}",
        "{where}: {field} deve ser {expected_pt}, encontrou {found_pt}",
    ),
    "chat.no_template": (
        "{path}: no chat template beside it (no chat_template.jinja, no chat_template in {config}); "
        "name one with --template",
        "{path}: não há modelo de chat ao lado dele (nem chat_template.jinja, nem chat_template em {config}); "
        "indique um com --template",
    ),
    "chat.bad_template_field": (
        "{path}: chat_template must be a string or a list of named templates with a 'default' one",
        "{path}: chat_template deve ser uma string ou uma lista de modelos com nome, um deles 'default'",
    ),
    "chat.own_tokenizer": (
        "{path}: a glassllm tokenizer has no special tokens or chat template; chat takes a real model's tokenizer",
        "{path}: um tokenizador do glassllm não tem tokens especiais nem modelo de chat; o chat aceita o "
        "tokenizador de um modelo real",
    ),
    "chat.template_syntax": (
        "{path}: the chat template is not valid Jinja{at}: {detail}",
        "{path}: o modelo de chat não é Jinja válido{at}: {detail}",
    ),
    "chat.template_refused": (
        "{path}: the chat template refuses this conversation{at}: {detail}",
        "{path}: o modelo de chat recusa esta conversa{at}: {detail}",
    ),
    "chat.template_forbidden": (
        "{path}: the chat template reaches for something the sandbox forbids{at}: {detail}",
        "{path}: o modelo de chat tenta acessar algo que a sandbox proíbe{at}: {detail}",
    ),
    "chat.template_error": (
        "{path}: the chat template fails on this conversation{at}: {detail}",
        "{path}: o modelo de chat falha nesta conversa{at}: {detail}",
    ),
    "chat.template_recursion": (
        "{path}: the chat template recurses too deeply{at}",
        "{path}: o modelo de chat tem recursão profunda demais{at}",
    ),
    "chat.template_memory": (
        "{path}: the chat template takes more memory than a rendering may have{at}",
        "{path}: o modelo de chat usa mais memória do que uma renderização pode ter{at}",
    ),
    "chat.template_too_large": (
        "{path}: the chat template renders too much ({detail}){at}",
        "{path}: o modelo de chat renderiza texto demais ({detail}){at}",
    ),
    "chat.mistral_version": (
        "{path}: Mistral's instruct format {version}: glassllm follows {known}; name a chat template with --template",
        "{path}: formato instruct {version} da Mistral: o glassllm segue {known}; indique um modelo de chat com "
        "--template",
    ),
    "chat.mistral_tools": (
        "{where}: {field}: Mistral's v1 format has no tools: mistral-common refuses tool calls and tool messages "
        "in it and leaves the tools out of the prompt (a v2 or later tokenizer file carries them)",
        "{where}: {field}: o formato v1 da Mistral não tem ferramentas: o mistral-common recusa nele chamadas e "
        "mensagens de ferramentas e deixa as ferramentas fora do prompt (um arquivo de tokenizador v2 ou "
        "posterior as leva)",
    ),
    "chat.mistral_role": (
        "{where}: {field}: Mistral's formats know the roles system, user, assistant and tool, not {role!r}",
        "{where}: {field}: os formatos da Mistral conhecem os papéis system, user, assistant e tool, não {role!r}",
    ),
    "chat.mistral_text_and_calls": (
        "{where}: {field}: before v7, Mistral's formats cannot hold an assistant's text and tool calls in one "
        "turn (mistral-common refuses it)",
        "{where}: {field}: antes da v7, os formatos da Mistral não comportam texto e chamadas de ferramentas do "
        "assistente num mesmo turno (o mistral-common recusa)",
    ),
    "chat.mistral_v2_results": (
        "{where}: {field}: Mistral's v2 format holds one tool result per assistant turn after the last user "
        "message (mistral-common refuses more)",
        "{where}: {field}: o formato v2 da Mistral comporta um resultado de ferramenta por turno do assistente "
        "depois da última mensagem do usuário (o mistral-common recusa mais)",
    ),
    "chat.mistral_empty": (
        "{where}: {field}: Mistral's formats need an assistant message to have text or tool calls",
        "{where}: {field}: os formatos da Mistral exigem que uma mensagem do assistente tenha texto ou chamadas "
        "de ferramentas",
    ),
    "chat.template_ended": (
        "{path}: the process rendering the chat template ended without an answer{at}",
        "{path}: o processo que renderiza o modelo de chat terminou sem resposta{at}",
    ),
    "chat.template_timeout": (
        "{path}: the chat template ran longer than {detail} and was stopped{at}",
        "{path}: o modelo de chat rodou por mais de {detail} e foi interrompido{at}",
    ),
}

# What a file is, in each language, for file.unreadable and file.unwritable.
_WHAT_PT = {
    "tokenizer file": "arquivo de tokenizador",
    "corpus file": "arquivo do corpus",
    "Hugging Face tokenizer file": "arquivo de tokenizador da Hugging Face",
    "glassllm tokenizer file": "arquivo de tokenizador do glassllm",
    "counts file": "arquivo de contagens",
    "configuration file": "arquivo de configuração",
    "text file": "arquivo de texto",
    "folder": "diretório",
    "conversation file": "arquivo de conversa",
    "chat template file": "arquivo de modelo de chat",
}
# The operating system's words for the failures a user meets, in Portuguese (as the GNU
# C library's pt_BR translation words them); others keep the system's English words.
_REASON_PT = {
    errno.ENOENT: "arquivo ou diretório inexistente",
    errno.EACCES: "permissão negada",
    errno.EISDIR: "é um diretório",
    errno.ENOTDIR: "não é um diretório",
    errno.ENOSPC: "não há espaço disponível no dispositivo",
    errno.EROFS: "sistema de arquivos somente para leitura",
}


@dataclass(frozen=True)
class Problem:
    """A problem's code (a key of :data:`MESSAGES`) and the fields its message names."""

    code: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    def text(self, locale: Locale = "en") -> str:
        """The message in ``locale``."""
        english, portuguese = MESSAGES[self.code]
        return (portuguese if locale == "pt" else english).format(**self.fields)


def problem(kind: type[_E], code: str, /, **fields: Any) -> _E:
    """An exception of type ``kind`` whose message is ``code``'s English text, carrying
    the problem: ``raise problem(ValueError, "count.jobs", jobs=0)``."""
    found = Problem(code, fields)
    return with_problem(kind(found.text()), found)


def with_problem(error: _E, found: Problem) -> _E:
    """``error``, carrying ``found`` (for exceptions built another way, as ``OSError``)."""
    error.problem = found  # type: ignore[attr-defined]
    return error


def os_problem(error: OSError, code: str, what: str, path: str) -> OSError:
    """``error`` again, its message saying which file and what failed: same type, same
    ``errno``, the file as its ``filename``, and a problem to word it in Portuguese."""
    message = MESSAGES[code][0].format(what=what, reason=error.strerror)
    reason_pt = _REASON_PT.get(error.errno or 0, error.strerror or "")
    found = Problem(code, {"what": what, "what_pt": what_pt(what), "path": path, "reason_pt": reason_pt})
    return with_problem(type(error)(error.errno, message, path), found)


def number_pt(number: int) -> str:
    """``1048576`` as a Portuguese reader groups its digits: ``1.048.576``."""
    return f"{number:,}".replace(",", ".")


def what_pt(what: str) -> str:
    """A kind of file (``"tokenizer file"``) in Portuguese, or as given if unknown."""
    return _WHAT_PT.get(what, what)


def describe(error: BaseException, locale: Locale = "en") -> str:
    """What went wrong, for a person, in ``locale``: the problem's words when the error
    carries one and a Portuguese reader asks, else the message itself (a ``KeyError``'s
    ``str()`` would wrap it in quotes)."""
    found = getattr(error, "problem", None)
    if locale == "pt" and isinstance(found, Problem):
        return found.text("pt")
    return str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)


def environment_locale(environment: Mapping[str, str] | None = None) -> Locale:
    """The language a POSIX program speaks in ``environment`` (this process's by
    default): the first of ``LC_ALL``, ``LC_MESSAGES`` and ``LANG`` that is set and not
    empty; Portuguese if it names Portuguese (``pt_BR.UTF-8``), else English."""
    environment = os.environ if environment is None else environment
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if environment.get(name):
            return "pt" if environment[name].lower().startswith("pt") else "en"
    return "en"
