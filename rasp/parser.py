"""Parsing RASP text into `rasp.ast`: the Lark parser, the tree-to-AST conversion, syntax errors.

The grammar (`grammar.lark`, shipped in the package) is built once. Lark's errors are translated
into `RaspSyntaxError`s in words people use (`syntax_errors.py`); an error at the end of the text is
marked `incomplete`, which is how the REPL knows to ask for another line.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import sys
from importlib import resources

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from rasp import ast
from rasp.deep_stack import run_deep
from rasp.errors import RaspSyntaxError, Source, Span
from rasp.sops import Comparison
from rasp.sources import Progress
from rasp.syntax_errors import translate_error


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = resources.files("rasp").joinpath("grammar.lark").read_text(encoding="utf-8")
    # The basic lexer makes keywords keywords everywhere, as in the original (`on = 3;` fails).
    return Lark(
        grammar, parser="lalr", lexer="basic", propagate_positions=True, maybe_placeholders=True
    )


def lark_parser() -> Lark:
    """The Lark parser of RASP's grammar (built once), for `rasp.continuation`."""
    return _lark()


_COMMAND_LINE = re.compile(
    r"[ \t]*(?:set|show|examples|s-op|selector|full[ \t]+seq[ \t]+display|exit|quit)\b"
)


def starts_command(line: str) -> bool:
    """Whether `line` starts with a REPL command's word (`set`, `exit`, `full seq display`, ...):
    no other statement can, and `parse` may end such a line with a `;`."""
    return _COMMAND_LINE.match(line) is not None


# A command whose words do not finish it yet (`set`, `show s-op`, `s-op examples`, `set example`):
# the original reads on, over later lines, for the rest.
_UNFINISHED_COMMAND = re.compile(
    r"\s*(?:set(?:\s+(?:s-op|selector))?(?:\s+example)?|show(?:\s+(?:s-op|selector))?"
    r"|(?:(?:s-op|selector)\s+)?examples|s-op|selector|full\s+seq\s+display)\s*"
)


def _terminate_commands(text: str) -> str:
    """End each REPL command of a longer text with `;`, as the original's grammar needs none.

    The original's files may hold `set example [1, 2, 3]` (no `;`) between statements. A command
    starts with a command keyword (which can start nothing else) and ends at the end of the first
    line where its brackets balance, and where its words are complete (`set example` has its value,
    `show` its `example`: the original reads on while the text is unfinished): that line gets a `;` before its comment; columns before it do
    not move. A lone command is left as is.
    """
    lines = text.split("\n")
    if sum(1 for line in lines if line.strip()) < 2:
        return text
    open_command, depth, words = False, 0, ""
    for number, line in enumerate(lines):
        if not open_command:
            if not _COMMAND_LINE.match(line):
                continue
            open_command, depth, words = True, 0, ""
        code_end, in_string = len(line), False
        for column, char in enumerate(line):
            if char == '"':
                in_string = not in_string
            elif in_string:
                continue
            elif char == "#":
                code_end = column
                break
            elif char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
        code = line[:code_end].rstrip()
        if code.strip():  # a blank or comment line adds nothing (appending it made this quadratic)
            words += " " + code.strip()
        if _UNFINISHED_COMMAND.fullmatch(words):
            continue  # `set example` whose value is on a later line, `show` its `example`, ...
        if depth <= 0 and not in_string:
            if not code.endswith(";"):
                lines[number] = code + ";" + line[len(code) :]
            open_command = False
    return "\n".join(lines)


def parse(
    text: str | Source, filename: str = "<input>", *, progress: Progress | None = None
) -> ast.Program:
    """Parse a whole program (or one REPL line) into an `ast.Program`; raise `RaspSyntaxError`.

    `text` may be a `Source` (its name is then the filename). Time is linear in the text's size;
    `progress("parsing", characters read, total)` is called now and then when given.
    """
    source = text if isinstance(text, Source) else Source(filename, text)
    terminated = _terminate_commands(source.text)
    try:
        tree = _parse_tree(terminated, progress)
    except UnexpectedInput as exc:
        raise _syntax_error(exc, source, terminated) from None
    try:
        # (on the deep stack, as statements run: a flat `1 + 1 + ...` of 1,000 terms is a tree
        # 1,000 deep, refused here as too deeply nested while it ran fine once built)
        return run_deep(lambda: _Builder(source).program(tree))
    except RecursionError:
        raise RaspSyntaxError(
            "the program is nested too deeply",
            Span(source, 1, 1, 1, 2),
            hint="split deeply nested expressions into named steps",
        ) from None


def _syntax_error(exc: UnexpectedInput, source: Source, terminated: str) -> RaspSyntaxError:
    """Lark's error in words, read in the text Lark parsed: after a command line that got its
    `;`, the original's offsets are one off (`2 +* 1` named the '*' where it meant the '+').
    The `;`s go at the ends of lines, so a line and column there are the same in the source."""
    if terminated == source.text:
        return translate_error(exc, source, _lark())
    error = translate_error(exc, dataclasses.replace(source, text=terminated), _lark())
    if error.span is not None:
        error.span = dataclasses.replace(error.span, source=source)
    return error


_PROGRESS_TOKENS = 2000  # tokens between two progress reports


def _int_literal(text: str, span: Span) -> int:
    try:
        return int(text)
    except ValueError:  # past Python's limit on text-to-int conversion, sys.get_int_max_str_digits
        raise RaspSyntaxError(
            f"an integer literal of {len(text):,} digits, more than Python reads "
            f"({sys.get_int_max_str_digits():,})",
            span,
            hint="compute a number that large (10 ^ 5000 is 1 followed by 5,000 zeros)",
        ) from None


def _parse_tree(text: str, progress: Progress | None) -> Tree:
    if progress is None:
        return _lark().parse(text)
    # The same LALR parse, driven a token at a time so that the caller can show how far it got.
    parser = _lark().parse_interactive(text)
    last = None
    for count, token in enumerate(parser.iter_parse(), 1):
        last = token
        if count % _PROGRESS_TOKENS == 0:
            progress("parsing", token.end_pos or 0, len(text))
    tree = parser.feed_eof(last)
    progress("parsing", len(text), len(text))
    return tree


# A string (to its closing quote or the end of its line) or a comment: no brace or word in it
# counts. One pass of a regular expression: the REPL asks at every line of a long `def` body.
_STRING_OR_COMMENT = re.compile(r'"[^"\n]*"?|#[^\n]*')


# `def` or `for` where a statement starts: a comprehension's `for` (`{a: 1 for a in l`) follows
# an expression, and a typo in one (its '}' left out) is an error to report, not a block to wait on.
_BLOCK_START = re.compile(r"(?:^|[;{}])\s*(?:def|for)\b")


def open_block(text: str) -> bool:
    """Whether `text` has a `def` or `for` statement and more '{' than '}' (outside strings and
    comments)."""
    code = _STRING_OR_COMMENT.sub("", text)
    if code.count("{") <= code.count("}"):
        return False
    return _BLOCK_START.search(code) is not None


def open_bracket(text: str) -> bool:
    """Whether `text` opens more brackets ('(', '[', '{') than it closes and its last line holds
    no ';' (outside strings and comments): no statement ends there, so the REPL reads the next
    line without parsing. (A ';' inside a bracket that opens no `def` or `for` block, which
    `open_block` covers, is an error to report at once: `{a: 1 for a in l;`.)"""
    code = _STRING_OR_COMMENT.sub("", text)
    if ";" in code[code.rfind("\n") + 1 :]:
        return False
    opened = code.count("(") + code.count("[") + code.count("{")
    return opened > code.count(")") + code.count("]") + code.count("}")


def is_complete(text: str) -> bool:
    """False when `text` stops inside an unfinished statement, def, for or bracket (the REPL
    then reads a continuation line)."""
    try:
        parse(text, "<repl>")
    except RaspSyntaxError as exc:
        return not exc.incomplete
    return True


def _span(source: Source, item: Tree | Token) -> Span:
    if isinstance(item, Token):
        return Span(
            source, item.line or 1, item.column or 1, item.end_line or 1, item.end_column or 1
        )
    meta = item.meta
    if getattr(meta, "empty", True):
        return Span(source, 1, 1, 1, 1)
    return Span(source, meta.line, meta.column, meta.end_line, meta.end_column)


_COMPARISONS = {c.value: c for c in Comparison}
_SUBSETS = {"s-op": ast.ExampleSubset.SOP, "selector": ast.ExampleSubset.SELECTOR}


class _Builder:
    """Converts the Lark tree into `rasp.ast` nodes (one method per grammar alias)."""

    def __init__(self, source: Source) -> None:
        self.source = source

    def span(self, item: Tree | Token) -> Span:
        return _span(self.source, item)

    # ---- statements -----------------------------------------------------------------------------

    def program(self, tree: Tree) -> ast.Program:
        return ast.Program(tuple(self.stmt(child) for child in tree.children), self.source)

    def stmt(self, tree: Tree) -> ast.Stmt:
        kind = str(tree.data)
        span = self.span(tree)
        ch = tree.children
        if kind == "expr_stmt":
            return ast.ExprStmt(self.expr(ch[0]), span)
        if kind == "assign":
            names, name_spans = self.names(ch[0])
            return ast.Assign(names, self.exprs(ch[1]), span, name_spans)
        if kind == "draw":
            return ast.Draw(self.expr(ch[0]), None if ch[1] is None else self.expr(ch[1]), span)
        if kind == "load":
            return ast.Load(str(ch[0])[1:-1], span)
        if kind == "funcdef":
            params = () if ch[1] is None else self.names(ch[1])[0]
            body = tuple(self.stmt(c) for c in ch[2:-1])
            return ast.FuncDef(str(ch[0]), params, body, self.exprs(ch[-1]), span)
        if kind == "forloop":
            body = tuple(self.stmt(c) for c in ch[2:])
            return ast.For(self.names(ch[0])[0], self.expr(ch[1]), body, span)
        return self.command(tree, span)

    def command(self, tree: Tree, span: Span) -> ast.ReplCommand:
        kind = str(tree.data)
        ch = tree.children
        both = ast.ExampleSubset.BOTH
        if kind == "set_example":
            return ast.ReplCommand(
                ast.CommandKind.SET_EXAMPLE, self.subset(ch[0]), None, self.expr(ch[1]), span
            )
        if kind == "show_example":
            return ast.ReplCommand(
                ast.CommandKind.SHOW_EXAMPLE, self.subset(ch[0]), None, None, span
            )
        if kind == "toggle_examples":
            return ast.ReplCommand(
                ast.CommandKind.TOGGLE_EXAMPLES, self.subset(ch[0]), self.switch(ch[1]), None, span
            )
        if kind == "toggle_full_seq":
            return ast.ReplCommand(
                ast.CommandKind.FULL_SEQ_DISPLAY, both, self.switch(ch[1]), None, span
            )
        if kind == "exit":
            return ast.ReplCommand(ast.CommandKind.EXIT, both, None, None, span)
        raise ValueError(f"unknown statement {kind}")  # grammar and builder out of step: a bug

    def subset(self, tree: Tree | None) -> ast.ExampleSubset:
        if tree is None:
            return ast.ExampleSubset.BOTH
        return _SUBSETS[str(tree.children[0])]

    @staticmethod
    def switch(tree: Tree) -> bool:
        return str(tree.children[0]) == "on"

    def names(self, tree: Tree) -> tuple[tuple[str, ...], tuple[Span, ...]]:
        return tuple(str(t) for t in tree.children), tuple(self.span(t) for t in tree.children)

    def exprs(self, tree: Tree | None) -> tuple[ast.Expr, ...]:
        # a list comprehension, not tuple() of a generator: on Python 3.12 and 3.13 each call
        # through C (tuple's) counts toward a fixed C recursion limit that setrecursionlimit does
        # not raise, and a 5,000-deep list literal was refused as nested too deeply
        return () if tree is None else tuple([self.expr(c) for c in tree.children])

    # ---- expressions ----------------------------------------------------------------------------

    def expr(self, tree: Tree) -> ast.Expr:
        kind = str(tree.data)
        span = self.span(tree)
        ch = tree.children
        match kind:
            case "name":
                return ast.Name(str(ch[0]), span)
            case "int_lit":
                return ast.Literal(_int_literal(str(ch[0]), span), span)
            case "float_lit":
                return ast.Literal(float(ch[0]), span)
            case "string_lit":
                return ast.Literal(str(ch[0])[1:-1], span)
            case "list_lit":
                return ast.ListLit(self.exprs(ch[0]), span)
            case "dict_lit":
                pairs = (
                    ()
                    if ch[0] is None
                    else tuple(
                        (self.expr(p.children[0]), self.expr(p.children[1])) for p in ch[0].children
                    )
                )
                return ast.DictLit(pairs, span)
            case "list_comp":
                return ast.ListComp(self.expr(ch[0]), self.names(ch[1])[0], self.expr(ch[2]), span)
            case "dict_comp":
                return ast.DictComp(
                    self.expr(ch[0]), self.expr(ch[1]), self.names(ch[2])[0], self.expr(ch[3]), span
                )
            case "unary":
                return ast.Unary(ast.UnaryOp(str(ch[0])), self.expr(ch[1]), span)
            case "binary":
                op = ch[1]
                return ast.Binary(
                    ast.BinaryOp(str(op)), self.expr(ch[0]), self.expr(ch[2]), span, self.span(op)
                )
            case "ternary":
                return ast.Ternary(self.expr(ch[0]), self.expr(ch[1]), self.expr(ch[2]), span)
            case "call":
                return ast.Call(self.expr(ch[0]), self.exprs(ch[1]), span)
            case "index":
                return ast.Index(self.expr(ch[0]), self.expr(ch[1]), span)
            case "select":
                comparison = _COMPARISONS[str(ch[3].children[0])]
                return ast.Select(self.expr(ch[1]), self.expr(ch[2]), comparison, span)
            case "aggregate":
                default = None if ch[3] is None else self.expr(ch[3])
                return ast.Aggregate(self.expr(ch[1]), self.expr(ch[2]), default, span)
            case "range":
                return ast.Range(self.exprs(ch[1]), span)
            case "zip":
                return ast.Zip(self.exprs(ch[1]), span)
            case "len":
                return ast.Len(self.expr(ch[1]), span)
        raise ValueError(f"unknown expression {kind}")  # grammar and builder out of step: a bug
