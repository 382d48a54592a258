"""The residual labels in one message, each that a `def`'s call named or made explained where the
message first names it: a second call's `got_2` says it is `got in pick, called at p.rasp:7:25
from both, called at p.rasp:9:7` (rasp.call_names.about).

Labels stay short and stable (they are model metadata, and a file's reach is rebuilt from them:
compiler.graph), so every message that prints one to a person explains it here, one way: the
certificate's refusals and the notes on the other builds tried (compiler.refusals), and the
certificate's line of `rasp compile` and `rasp verify` (rasp.tools.certificate_text).

A label the compiler gave an unnamed s-op (`_map_1`, `_f_aggregate_2`: `GENERATED`) that no `def`
made is explained by what it computes where the message's maker knows it (`texts`): `_map_1
(indices < tokens_int)`, so that no message leaves a reader with a bare internal name; in a
decision's state it is written as that text where short (`at query (round(v2)=0)`, `inline`), and
so is one a `def` made, explained after the place under its text (`; round(v2): in f, ...`)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping

from rasp.nodes import LABEL_MAX, is_one_term
from rasp.text_width import display_width

# what a derived dimension's name adds to its s-op's (`x.frac`, `x~sel`, `indices^2`)
SEPARATORS = re.compile(r"[.~^]")
# a `name=value` of a decision's state (`query (got_2=a, tokens:b=1)`): a name after `(` or `, `
_PAIR = re.compile(r"(?:(?<=\()|(?<=, ))([^\s=(),]+)=")
# the names compiler.graph gives unnamed s-ops: `_<op>_<n>`, `_<def>_<op>_<n>`, and a second
# use's `_2` (`_map_1_2`)
GENERATED = re.compile(
    r"_(?:\w+_)?(?:const|map|select|and|or|not|aggregate|selector_width)_\d+(?:_\d+)?"
)


# one inside other text (`round(_map_3)`), which no reader of a message could look up
_GENERATED_IN = re.compile(rf"(?<![\w.]){GENERATED.pattern}(?!\w)")


def is_generated(label: str) -> bool:
    """Whether `label` is a name the compiler made up for an unnamed s-op (`_map_3`)."""
    return GENERATED.fullmatch(label) is not None


def generated_texts(texts: Mapping[str, str]) -> Callable[[str], str | None]:
    """`texts` (a block's label -> what it computes, as a certificate's checks record it) as
    MessageNames reads them: a text for each generated label, None for the others."""
    return lambda label: texts.get(label) if is_generated(label) else None


def stem(label: str) -> str:
    """The s-op a residual name (or a dimension derived from it: `x.frac`, `x~sel`) is of."""
    return SEPARATORS.split(label, maxsplit=1)[0]


class MessageNames:
    """The labels of one message as it names them (`about(name)`: what to say of an s-op's
    residual name, None where no `def` named or made it): each explained once, where the message
    first names it; a label said again, or that no `def` made, as it is. `texts(label)`: what a
    generated label (`_map_1`) no `def` made computes, said in its stead (`indices < tokens_int`),
    None where unknown."""

    def __init__(
        self,
        about: Callable[[str], str | None],
        texts: Callable[[str], str | None] | None = None,
    ) -> None:
        self._about = about
        self._texts = texts
        self._said: set[str] = set()
        self._inlined: dict[str, dict[str, str]] = {}  # place -> its labels written as text

    def said(self, label: str) -> None:
        """Take `label` as explained already (the message quotes what it computes beside it)."""
        self._said.add(label)

    def _told(self, label: str) -> str | None:
        # the label itself first: a Python program's name may hold a `.` (`re.v`)
        for name in dict.fromkeys((label, stem(label))):
            if name in self._said:
                return None
            told = self._about(name)
            if told is None and self._texts is not None and is_generated(name):
                told = self._texts(name)
            if told is not None:
                self._said.add(name)
                return told
        return None

    def label(self, label: str) -> str:
        """`got_2 (got in pick, called at ...)`, `x~sel (in f, called at ...)`."""
        told = self._told(label)
        return label if told is None else f"{label} ({told})"

    def quoted(self, label: str) -> str:
        """`'balance_2' (balance in f, called at ...)`: a label a hint quotes."""
        told = self._told(label)
        return f"'{label}'" if told is None else f"'{label}' ({told})"

    def block(self, block: str) -> str:
        """A certificate's block (`a, b` for a head computing two), each label so."""
        return ", ".join(self.label(part) for part in block.split(", "))

    def inline(self, where: str) -> str:
        """A decision's place (`query (_map_17=0)`) with each generated label of its state
        written as the program text it stands for, where that is short and names no other
        generated label: `query (round(v2)=0)`, `unit 2 at ((v2 < 3)=True)` (an operation
        bracketed, as in an s-op's label). Such a label no `def` made is then said (`told_in` adds
        nothing for it); one a `def`'s call made is explained by `told_in` under its text (`;
        round(v2): in f, called at p.rasp:6:7`), unless the message said it already (it then
        stays, as the reader met it). Two labels of one text (a `def` called twice) and a derived
        dimension (`_map_1.frac=0.5`) keep their labels, explained by `told_in`."""
        texts = {m.group(1): self._inline_text(m.group(1)) for m in _PAIR.finditer(where)}
        shared = Counter(text for text in texts.values() if text is not None)
        written = {label: t for label, t in texts.items() if t is not None and shared[t] == 1}
        self._inlined[where] = written
        parts, last = [], 0
        for match in _PAIR.finditer(where):
            text = written.get(match.group(1))
            if text is not None:
                parts += [where[last : match.start(1)], text]
                last = match.end(1)
        for label in written:
            if self._about(label) is None:
                self._said.add(label)
        return "".join(parts) + where[last:]

    def _inline_text(self, label: str) -> str | None:
        if self._texts is None or not is_generated(label):
            return None
        if self._about(label) is not None and label in self._said:
            return None  # (a def's, which the message explained by its label)
        text = self._texts(label)
        if text is None or display_width(text) > LABEL_MAX or _GENERATED_IN.search(text):
            return None
        return text if is_one_term(text) else f"({text})"

    def told_in(self, where: str) -> str:
        """What a message adds after a decision's place (`query (_f_map_2=1.5)`, `unit 3 at
        (got_2=a)`) for its state's labels, which stay as written (a value may hold any text):
        `; _f_map_2: in f, called at p.rasp:6:7` (`; (x + 1): in f, ...` for one `inline` wrote as
        its text), or nothing."""
        told = []
        written = self._inlined.get(where, {})
        for match in _PAIR.finditer(where):
            if match.group(1) in written:  # written as its text: a def's said under it
                label, about = match.group(1), self._about(match.group(1))
                if about is not None and label not in self._said:
                    self._said.add(label)
                    told.append(f"; {written[label]}: {about}")
                continue
            text = self._told(match.group(1))
            if text is not None:  # (of the s-op: `got_2: got in f, ...` for `got_2.frac=0.5`)
                label = match.group(1)
                told.append(f"; {label if label in self._said else stem(label)}: {text}")
        return "".join(told)
