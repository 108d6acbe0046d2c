"""Where a Hugging Face tokenizer's chat template is, and what transformers gives it.

The template is the file the user names, else ``chat_template.jinja`` beside the
``tokenizer.json``, else the ``chat_template`` of the ``tokenizer_config.json`` beside
it (a string, or named templates: ``default``, and ``tool_use`` when there are tools, as
transformers chooses). The template's variables besides the conversation are the
tokenizer's named special tokens from that ``tokenizer_config.json`` (``bos_token``,
``eos_token``, … as transformers' ``special_tokens_map`` has them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glassllm.formats.files import read_bounded
from glassllm.shown.problems import problem

__all__ = ["ChatTemplate", "find_template"]

# transformers' SPECIAL_TOKENS_ATTRIBUTES: the names its special_tokens_map may hold.
_NAMED_TOKENS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


@dataclass(frozen=True)
class ChatTemplate:
    """A chat template's sources (one, or named ones) and the variables it is given."""

    path: str  # the file it came from, as errors name it
    sources: dict[str, str]  # name → Jinja source; one named "default" at least
    variables: dict[str, str] = field(default_factory=dict)

    def source(self, with_tools: bool) -> str:
        """The template transformers picks: ``tool_use`` for tools when there is one."""
        if with_tools and "tool_use" in self.sources:
            return self.sources["tool_use"]
        return self.sources["default"]


def _config(folder: Path) -> tuple[dict[str, Any], Path]:
    path = folder / "tokenizer_config.json"
    if not path.is_file():
        return {}, path
    try:
        found = json.loads(read_bounded(path, "tokenizer file"))
    except json.JSONDecodeError as error:
        raise problem(ValueError, "chat.not_json", where=f"{path}:{error.lineno}", reason=error.msg) from None
    return (found if isinstance(found, dict) else {}), path


def _variables(config: dict[str, Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name in _NAMED_TOKENS:
        value = config.get(name)
        if isinstance(value, dict):  # an AddedToken as older configs write it
            value = value.get("content")
        if isinstance(value, str):
            found[name] = value
    return found


def _sources(raw: object, path: Path) -> dict[str, str]:
    if isinstance(raw, str):
        return {"default": raw}
    if isinstance(raw, list):
        named = {entry.get("name"): entry.get("template") for entry in raw if isinstance(entry, dict)}
        sources = {name: text for name, text in named.items() if isinstance(name, str) and isinstance(text, str)}
        if "default" in sources:
            return sources
    raise problem(ValueError, "chat.bad_template_field", path=path)


def find_template(tokenizer_path: str | Path, named: str | Path | None = None) -> ChatTemplate:
    """The chat template of the tokenizer file ``tokenizer_path`` (see the module's
    docstring), or the file ``named``; ``ValueError`` naming the files looked at when
    there is none."""
    folder = Path(tokenizer_path).parent
    config, config_path = _config(folder)
    variables = _variables(config)
    if named is not None:
        return ChatTemplate(str(named), {"default": read_bounded(named, "chat template file")}, variables)
    beside = folder / "chat_template.jinja"
    if beside.is_file():
        return ChatTemplate(str(beside), {"default": read_bounded(beside, "chat template file")}, variables)
    if "chat_template" in config:
        return ChatTemplate(str(config_path), _sources(config["chat_template"], config_path), variables)
    raise problem(ValueError, "chat.no_template", path=tokenizer_path, config=config_path, beside=beside)
