"""The words of `rasp --help` and `rasp COMMAND --help`: descriptions and examples.

Every example is a real command line: `tests/test_cli_help.py` parses each one with the
CLI's own parser, and `rasp` runs them from the repository root (`programs/` is there).
"""

from __future__ import annotations

from rasp.tools.arguments import TOKENS_HELP

INPUT_HELP = (
    "the input: a JSON list of tokens ('[\"the\",\"cat\"]', '[3,1,2]') or text split into "
    "characters ('hello'); see 'Tokens' below"
)
FILE_HELP = (
    "the program (a .rasp file; - reads it from standard input), or PROG.py:NAME, a Python program "
    "built with rasp.tracr (NAME: an s-op, or a function returning one); loading a .py file runs it "
    "as python would, so load only programs you trust"
)

DESCRIPTIONS = {
    "rasp": (
        "RASP (Thinking Like Transformers): interpret, compile to transformer weights, run.\n"
        "`rasp` alone starts the REPL (rasp repl), as the original's launcher does."
    ),
    "run": """\
Run a program with the interpreter (FILE), or a compiled model (--model).

Output: the value of NAME on INPUT in RASP's display form followed by its type, e.g.
  [o, l, l, e, h] (strings)
(all-equal values print as [v]*n, floats rounded to 3 places, bools as T/F, as in the original RASP
REPL). With --json, exactly one JSON value: the list of per-position outputs, with ints, floats,
strings and bools kept as such, e.g. ["o", "l", "l", "e", "h"].""",
    "compile": """\
Compile a program's s-op into a transformer (a .safetensors file) that accepts every input of 1 to
N tokens of VOCAB, and prove it exact (the certificate). Prints what it wrote and the certificate;
--json prints them as one JSON object.""",
    "verify": """\
Compare a compiled model (compiled now, or --model) with the interpreter, running FILE or, given
only --model, the program the model records: every input up to the exhaustive length, then seeded
longer ones (half random, half guided to values of the program's variables that random inputs
miss), then a sweep over evaluation orders. Prints what was covered (exit 0) or the first failing
input and where the model first goes wrong (exit 1).""",
    "show": """\
Summarise a compiled model: program, vocabulary, shape, the operation of every head and MLP, the
certificate and the residual stream's layout. The file is checked exactly as `rasp run --model`
checks it. --source prints the program the model records instead.""",
    "draw": """\
Draw a program's or model's computation on one input (needs the viz extra, matplotlib): every
head's attention pattern and the residual stream after each layer, as a PNG (or the format -o's
suffix names: .svg, .pdf, ...); --dot also writes the computation graph as DOT text (rendered to
OUT.dot.png where graphviz is installed). A .rasp TARGET is compiled for this input first.""",
    "export": """\
Export a compiled model for another library. transformer-lens: DIR/config.json (the keyword
arguments of HookedTransformerConfig), DIR/rasp_forge.json (vocabulary, output decoder, residual
labels) and DIR/model.safetensors.""",
    "repl": """\
Interactive RASP, like the original's REPL (running examples, selector grids, load "file";), with
history, completion, and a compiled view (:compile, :layers, :residual, :verify, :draw; :help).""",
}

EXAMPLES = {
    "rasp": [
        "rasp run programs/reverse.rasp --input hello",
        "rasp compile programs/reverse.rasp --vocab abc --max-len 10 -o reverse.safetensors",
        "rasp run --model reverse.safetensors --input abcab",
        "rasp COMMAND --help",
    ],
    "run": [
        "rasp run programs/sort.rasp --input hello",
        'rasp run programs/hist.rasp --input \'["the","cat","the"]\' --json',
        "rasp run programs/paper_examples.rasp --name hist_nobos --input hello",
        "rasp run - --input abc < programs/reverse.rasp",
        "rasp run --model reverse.safetensors --input abcab",
    ],
    "compile": [
        "rasp compile programs/reverse.rasp --vocab abc --max-len 10 -o reverse.safetensors",
        "rasp compile programs/sort.rasp --vocab '[1,2,3]' --max-len 8 -o sort.safetensors --json",
    ],
    "verify": [
        "rasp verify programs/reverse.rasp --vocab abc --max-len 6",
        "rasp verify programs/reverse.rasp --vocab abc --max-len 10 --model reverse.safetensors",
        "rasp verify --model reverse.safetensors",
        "rasp verify programs/hist.rasp --vocab ab --max-len 12 --exhaustive-len 8 --samples 200",
    ],
    "show": [
        "rasp show reverse.safetensors",
        "rasp show reverse.safetensors --json",
        "rasp show reverse.safetensors --source",
    ],
    "draw": [
        "rasp draw programs/reverse.rasp --input abcab -o reverse.png",
        "rasp draw reverse.safetensors --input abcab -o reverse.png --dot reverse.dot",
    ],
    "export": [
        "rasp export reverse.safetensors --to transformer-lens -o tl_reverse",
    ],
    "repl": [
        "rasp repl",
        "rasp repl programs/paper_examples.rasp",
    ],
}

_TAKES_TOKENS = ("run", "compile", "verify", "draw")


def epilog(command: str) -> str:
    """The text after a command's options: its examples, and how tokens are read where it has
    --input or --vocab."""
    text = "examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[command])
    if command in _TAKES_TOKENS:
        text += "\n\n" + TOKENS_HELP
    return text
