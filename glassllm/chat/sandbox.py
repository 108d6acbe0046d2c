"""Rendering a Hugging Face chat template: someone else's code, run where it can do no harm.

The template is compiled as transformers compiles it (Jinja2's
``ImmutableSandboxedEnvironment`` with ``trim_blocks``, ``lstrip_blocks``, the
``loopcontrols`` extension and transformers' ``{% generation %}`` tag; its ``tojson``
filter and its ``raise_exception``, ``strftime_now``, ``dict`` and ``namespace``
globals), so it renders the same text.

The sandbox keeps a template from reaching Python's internals, but not from looping for
ever, recursing or rendering gigabytes. Rendering therefore happens in a separate
process, :class:`Renderer`'s worker, which the caller waits for with a deadline and kills
when it passes: a thread cannot be stopped from outside, and a pure-Jinja loop
(``{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}``) calls
nothing a hook could check. In the worker, output is counted as the template yields it
and refused past :data:`MAX_RENDER_CHARS`, ``*`` on strings and lists is refused past the
same bound before it is computed, and the address space is capped (where the system
allows it), so a template that builds a huge string without writing it fails there with
a ``MemoryError`` instead of taking the machine's memory.

The worker is a new interpreter started with ``subprocess`` (not ``multiprocessing``,
whose ``spawn`` runs the caller's main script again in the child), speaking JSON lines on
its standard input and output. Many conversations go to it in one request (a dataset's
lines, a batch at a time), so it costs one round trip per batch, not per conversation.

Asked to, the worker also says which part of the template wrote each stretch of the
rendering (:class:`Traced`). Jinja2 records, for the Python it compiles a template to,
which template line each stretch of that code comes from
(``Template.get_corresponding_lineno``); the worker drives the compiled render generator
itself and reads, at each string it yields, the line its frame stands on. For that line
to name one part of the template, not just a line that may hold many (Llama 3's whole
template is one line), a second compilation numbers the template's parts instead of its
lines: each ``{{ … }}`` and ``{% … %}`` tag, and each line of text between tags, which is
made an expression of its own so that Jinja2 neither joins it with its neighbours nor
leaves it without a line of its own (a ``finalize`` that needs the context keeps Jinja2
from folding constants at compile time; it returns each value as it is, so the text is
the same). The numbers map back to each part's line and source text.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["MAX_RENDER_CHARS", "PART_CHARS", "RENDER_SECONDS", "RenderFailure", "Renderer", "Traced", "serve"]

# The most characters one conversation's rendering may have: a 128k-token context is
# about half a million characters, so this leaves room for any real conversation.
MAX_RENDER_CHARS = 16 << 20
# How long the worker may take over one request (a batch of conversations, each rendered
# in well under a millisecond by real templates).
RENDER_SECONDS = 10.0
# How long a new worker may take to start (an interpreter importing Jinja2): apart from
# the render's deadline, so that a busy machine's slow start is not blamed on a template.
_START_SECONDS = 60.0
# The worker's first line, once it can render.
_READY = "ready\n"
# The worker's address space (where the system caps it): the interpreter, Jinja2 and a
# few renderings of MAX_RENDER_CHARS fit many times over.
_WORKER_MEMORY = 2 << 30
# A template part's source text is cut past this many characters (a long system prompt
# written as text): enough to recognise it, its line says where the rest is.
PART_CHARS = 100


class RenderFailure(Exception):
    """A template that could not render a conversation: ``kind`` says why (``syntax``,
    ``refused``, ``forbidden``, ``error``, ``recursion``, ``memory``, ``too_large``,
    ``timeout``, ``ended``), ``detail`` is the template's or Jinja2's own words."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


class Traced(NamedTuple):
    """A rendering and which template part wrote it: ``parts`` are ``(end, line, text)``
    in order, each stretch running from the previous one's end (0 first) to ``end``;
    ``line`` counts from 1, ``text`` is the part's source (cut at :data:`PART_CHARS`)."""

    text: str
    parts: list[tuple[int, int, str]]


def _environment() -> Any:
    """Jinja2's sandbox with what transformers adds to it (see the module's docstring)."""
    import jinja2
    import jinja2.ext
    import jinja2.nodes
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Generation(jinja2.ext.Extension):
        """transformers' ``{% generation %}`` block: it marks the assistant's text for
        a mask glassllm does not make, and renders its body unchanged."""

        tags = {"generation"}  # noqa: RUF012 (Jinja2 reads it as a class attribute)

        def parse(self, parser: Any) -> Any:
            line = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(line)

        def _body(self, caller: Callable[[], str]) -> str:
            return caller()

    class Bounded(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset({"*"})

        def unsafe_undefined(self, obj: Any, attribute: str) -> Any:
            # Jinja2 (and so transformers) gives an undefined value that renders as
            # nothing; a template that reaches for Python's internals is refused here.
            raise jinja2.exceptions.SecurityError(
                f"access to attribute {attribute!r} of {type(obj).__name__!r} is unsafe"
            )

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            for sequence, times in ((left, right), (right, left)):
                repeated = isinstance(sequence, str | list | tuple) and isinstance(times, int)
                if repeated and len(sequence) * times > MAX_RENDER_CHARS:
                    raise RenderFailure("too_large", f"{len(sequence)} × {times}")
            return super().call_binop(context, operator, left, right)

    environment = Bounded(trim_blocks=True, lstrip_blocks=True, extensions=[Generation, jinja2.ext.loopcontrols])
    environment.filters["tojson"] = _tojson
    environment.globals.update(
        raise_exception=_raise_exception, strftime_now=_strftime_now, dict=_TemplateDict(), namespace=_namespace()
    )
    return environment


def _tojson(
    value: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
) -> str:
    # transformers' own: Jinja2's escapes HTML characters, which a prompt must not have.
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise_exception(message: str) -> None:
    import jinja2

    raise jinja2.exceptions.TemplateError(message)


def _strftime_now(format: str) -> str:
    return datetime.now().strftime(format)


class _TemplateDict:
    """transformers' ``dict``: builds dicts, and offers nothing else to reach through."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict.fromkeys(*args, **kwargs)


def _namespace() -> type:
    """transformers' ``namespace``: Jinja2's, refusing names that start with ``_``."""
    import jinja2.exceptions
    import jinja2.utils

    def check(name: object) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(f"a namespace attribute may not start with '_': {name!r}")

    class TemplateNamespace(jinja2.utils.Namespace):
        def __init__(*args: Any, **kwargs: Any) -> None:
            # Jinja2's own signature trick: no named ``self``, so ``namespace(self=…)`` works.
            self, values = args[0], dict(*args[1:], **kwargs)
            for name in values:
                check(name)
            jinja2.utils.Namespace.__init__(self, values)

        def __setitem__(self, name: str, value: Any) -> None:
            check(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

    return TemplateNamespace


@lru_cache(maxsize=8)
def _compiled(source: str) -> Any:
    return _environment().from_string(source)


def _tags(environment: Any, source: str) -> list[tuple[int, str]]:
    """Each ``{{ … }}`` and ``{% … %}`` tag of ``source`` in order: its line and its
    source text, from Jinja2's own lexer (whose tokens hold the raw text)."""
    tags: list[tuple[int, str]] = []
    current: list[Any] | None = None
    for line, kind, value in environment.lexer.tokeniter(source, None):
        if kind in ("block_begin", "variable_begin"):
            current = [line, value]
        elif current is not None:
            current[1] += value
            if kind in ("block_end", "variable_end"):
                tags.append((current[0], current[1].rstrip("\r\n")))
                current = None
    return tags


def _cut(text: str) -> str:
    return text if len(text) <= PART_CHARS else text[: PART_CHARS - 1] + "…"


@lru_cache(maxsize=8)
def _traced(source: str) -> tuple[Any, list[tuple[int, str]]]:
    """``source`` compiled with its parts numbered instead of its lines (see the
    module's docstring), and each part's ``(line, source text)``, part 1 first."""
    import jinja2
    import jinja2.ext
    from jinja2.lexer import Token

    environment = _environment()
    tags = iter(_tags(environment, source))
    parts: list[tuple[int, str]] = []

    class Numbered(jinja2.ext.Extension):
        def filter_stream(self, stream: Any) -> Any:
            number = 0
            for token in stream:
                if token.type in ("block_begin", "variable_begin"):
                    parts.append(next(tags))
                    number = len(parts)
                elif token.type == "data":
                    for offset, line in enumerate(token.value.splitlines(keepends=True)):
                        parts.append((token.lineno + offset, _cut(line)))
                        number = len(parts)
                        yield from (Token(number, "variable_begin", "{{"), Token(number, "string", line))
                        yield Token(number, "variable_end", "}}")
                    continue
                yield Token(number, token.type, token.value)

    @jinja2.pass_context
    def unchanged(context: Any, value: Any) -> Any:
        return value

    environment.add_extension(Numbered)
    environment.finalize = unchanged
    template = environment.from_string(source)
    return template, [(line, _cut(text)) for line, text in parts]


def _render_one(source: str, variables: dict[str, Any], traced: bool = False) -> str | Traced:
    """One conversation rendered, its output counted as the template yields it; with
    ``traced``, each stretch's template part too."""
    import jinja2

    try:
        template = _compiled(source)
    except jinja2.exceptions.TemplateSyntaxError as error:
        raise RenderFailure("syntax", f"{error.message} (line {error.lineno})") from None
    try:
        if not traced:
            return _collect(template.generate(**variables), None)
        template, parts = _traced(source)
        return _collect(template.root_render_func(template.new_context(variables)), (template, parts))
    except jinja2.exceptions.SecurityError as error:
        raise RenderFailure("forbidden", str(error)) from None
    except jinja2.exceptions.TemplateError as error:
        raise RenderFailure(
            "refused" if type(error) is jinja2.exceptions.TemplateError else "error", str(error)
        ) from None
    except RecursionError:
        raise RenderFailure("recursion", "") from None
    except MemoryError:
        raise RenderFailure("memory", "") from None
    except (TypeError, ValueError, AttributeError, KeyError, IndexError, ArithmeticError) as error:
        raise RenderFailure("error", f"{type(error).__name__}: {error}") from None


def _collect(generator: Any, traced: tuple[Any, list[tuple[int, str]]] | None) -> str | Traced:
    """What ``generator`` yields, refused past :data:`MAX_RENDER_CHARS`; with
    ``traced`` (the numbered template and its parts), which part wrote each string: the
    part of the line the innermost generator's frame stands on as it yields (a
    ``{% block %}`` is a generator of its own)."""
    pieces: list[str] = []
    stretches: list[tuple[int, int, str]] = []
    size = 0
    for piece in generator:
        size += len(piece)
        if size > MAX_RENDER_CHARS:
            raise RenderFailure("too_large", f"more than {MAX_RENDER_CHARS:,} characters")
        pieces.append(piece)
        if traced is None or not piece:
            continue
        inner = generator
        while getattr(inner, "gi_yieldfrom", None) is not None:
            inner = inner.gi_yieldfrom
        template, parts = traced
        number = template.get_corresponding_lineno(inner.gi_frame.f_lineno)
        line, text = parts[number - 1] if 0 < number <= len(parts) else (0, "")
        if stretches and stretches[-1][1:] == (line, text):
            stretches[-1] = (size, line, text)
        else:
            stretches.append((size, line, text))
    text = "".join(pieces)
    return text if traced is None else Traced(text, stretches)


def _render_batch(batch: Sequence[Sequence[Any]]) -> list[str | Traced | RenderFailure]:
    found: list[str | Traced | RenderFailure] = []
    for request in batch:
        try:
            found.append(_render_one(*request))
        except RenderFailure as failure:
            found.append(failure)
    return found


def _answer(found: str | Traced | RenderFailure) -> dict[str, Any]:
    if isinstance(found, RenderFailure):
        return {"failure": [found.kind, found.detail]}
    if isinstance(found, Traced):
        return {"text": found.text, "parts": found.parts}
    return {"text": found}


def serve() -> None:
    """The worker's loop, on standard input and output: a JSON line of ``[template
    source, variables]`` requests (``[source, variables, true]``: traced) in, a JSON
    line of ``{"text"}`` (``{"text", "parts"}``) or ``{"failure": [kind, detail]}``
    answers out."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (_WORKER_MEMORY, _WORKER_MEMORY))
    except (ImportError, ValueError, OSError):
        pass  # no cap on this system: the deadline still bounds the worker
    sys.setrecursionlimit(2000)
    _environment()  # imports Jinja2: the start's cost, paid before saying ready
    sys.stdout.write(_READY)
    sys.stdout.flush()
    for line in sys.stdin:
        answers = [_answer(found) for found in _render_batch(json.loads(line))]
        sys.stdout.write(json.dumps(answers) + "\n")
        sys.stdout.flush()


# The worker: a new interpreter that imports the glassllm this one runs (its folder put
# first on the path), and not the script that started it, as multiprocessing would; -P
# keeps the current folder off the path, so no file there can stand in for a module.
_WORKER = ("-P", "-c", "from glassllm.chat.sandbox import serve; serve()")
_PACKAGES = str(Path(__file__).resolve().parents[2])


def _placeholder(value: object) -> str:
    # transformers shows a template anything that is not plain data as its type's name.
    return f"<{type(value).__name__}>"


class Renderer:
    """A worker process that renders templates, waited for with a deadline (see the
    module's docstring); started on first use, started again after a kill."""

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = RENDER_SECONDS if seconds is None else seconds
        self._process: subprocess.Popen[str] | None = None
        self._answers: queue.Queue[str | None] = queue.Queue()
        self._started = False  # whether the worker said it is ready

    def _start(self) -> subprocess.Popen[str]:
        if self._process is None:
            path = os.pathsep.join(filter(None, (_PACKAGES, os.environ.get("PYTHONPATH"))))
            self._process = subprocess.Popen(
                [sys.executable, *_WORKER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
                env={**os.environ, "PYTHONPATH": path},
            )
            self._answers = queue.Queue()
            self._started = False
            # A thread reads the answers, so that waiting for one can have a deadline
            # on every system (select() does not wait on Windows pipes).
            threading.Thread(target=_read, args=(self._process, self._answers), daemon=True).start()
        return self._process

    def send(self, batch: Sequence[tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], bool]]) -> None:
        """Ask for ``batch`` rendered: each a template's source and its variables, and
        whether to say which part wrote what (a :class:`Traced` answer)."""
        process = self._start()
        assert process.stdin is not None
        try:
            process.stdin.write(json.dumps(list(batch), default=_placeholder) + "\n")
            process.stdin.flush()
        except OSError:
            self.close()  # the worker is gone: receive says so

    def receive(self) -> list[str | Traced | RenderFailure]:
        """The answer to the last :meth:`send`, or one failure: ``timeout`` (the worker
        killed) when it does not come within the deadline, ``ended`` when the worker
        ended without answering."""
        if not self._started:
            with contextlib.suppress(queue.Empty):
                self._started = self._answers.get(timeout=_START_SECONDS) == _READY
            if not self._started:
                self.close()
                return [RenderFailure("ended", "")]
        try:
            line = self._answers.get(timeout=self.seconds)
        except queue.Empty:
            self.close()
            return [RenderFailure("timeout", f"{self.seconds:g} s")]
        if line is None:
            self.close()
            return [RenderFailure("ended", "")]
        return [_answered(found) for found in json.loads(line)]

    def render(
        self, batch: Sequence[tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], bool]]
    ) -> list[str | Traced | RenderFailure]:
        """:meth:`send`, then :meth:`receive`."""
        self.send(batch)
        return self.receive()

    def close(self) -> None:
        """End the worker (killed: it may be in a template's endless loop)."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            for stream in (self._process.stdin, self._process.stdout):
                if stream is not None:
                    stream.close()
        self._process = None
        self._answers = queue.Queue()


def _answered(found: dict[str, Any]) -> str | Traced | RenderFailure:
    if "failure" in found:
        return RenderFailure(*found["failure"])
    if "parts" in found:
        return Traced(found["text"], [(end, line, text) for end, line, text in found["parts"]])
    return found["text"]


def _read(process: subprocess.Popen[str], answers: queue.Queue[str | None]) -> None:
    """Each line the worker writes, into ``answers``; ``None`` when it ends."""
    assert process.stdout is not None
    try:
        for line in process.stdout:
            answers.put(line)
    except (OSError, ValueError):
        pass  # closed by close(): the worker was killed
    answers.put(None)
