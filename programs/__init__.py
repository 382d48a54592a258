"""The RASP program library shipped with rasp-forge (`.rasp` files beside this module)."""

# Each library program with a vocabulary its certificate and exactness checks use (one character
# per token): dyck1 also sees a non-bracket, hist_bos its BOS marker, paper_examples every bracket.
VOCABULARIES = {
    "reverse": "abc",
    "hist": "abc",
    "double_hist": "abc",
    "sort": "abc",
    "most_freq": "abc",
    "length": "abc",
    "frac_prevs": "xab",  # the program counts "x": over "abc" it is a mean of zeros
    "induction": "abc",
    "dyck1": "()x",
    "dyck2": "(){}",
    "hist_bos": "§ab",
    "paper_examples": "()[]{}",
}
