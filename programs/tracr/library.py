"""tracr's library programs (rasp.tracr.lib), one name each, for `rasp compile library.py:NAME`.

length          the length at every position            "abc" -> [3, 3, 3]
reverse         the tokens backwards                    "abc" -> [c, b, a]
hist            occurrences of each token               "abac" -> [2, 1, 2, 1]
sort_unique     tokens sorted (distinct tokens)          [3, 1, 2] -> [1, 2, 3]
sort            number tokens sorted (ties by position)  [2, 1, 2] -> [1, 2, 2]
sort_freq       tokens by decreasing frequency           "abb" -> [b, b, a]
frac_prevs      fraction of "x" tokens so far            "xax" -> [True, 0.5, 0.667]
pair_balance    "(" fraction minus ")" fraction so far   "(()" -> [1, 1.0, 0.333]
shuffle_dyck    are () balanced (at every position)      "(()" -> [False, False, False]
shuffle_dyck2   are () and {} each balanced              "({)}" -> [True, True, True, True]
detect_abc      where "abc" ends (None before it fits)   "abc" -> [None, None, True]
count_less_freq tokens occurring at most twice           "aaab" -> [1, 1, 1, 1]
count_a         how many "a" tokens                      "aba" -> [2, 2, 2]
nary_concat     token, index and token joined            "ab" -> [a0a, b1b]
"""

from rasp import tracr as rasp
from rasp.tracr import lib

length = lib.make_length()
reverse = lib.make_reverse(rasp.tokens)
hist = lib.make_hist()
sort_unique = lib.make_sort_unique(rasp.tokens, rasp.tokens)
sort = lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=64, min_key=1)
sort_freq = lib.make_sort_freq(max_seq_len=64)
frac_prevs = lib.make_frac_prevs((rasp.tokens == "x").named("is_x"))
pair_balance = lib.make_pair_balance(rasp.tokens, "(", ")")
shuffle_dyck = lib.make_shuffle_dyck(pairs=["()"])
shuffle_dyck2 = lib.make_shuffle_dyck2()
detect_abc = lib.detect_pattern(rasp.tokens, "abc")
count_less_freq = lib.make_count_less_freq(2)
count_a = lib.make_count(rasp.tokens, "a")
nary_concat = lib.make_nary_sequencemap(
    lambda a, i, b: f"{a}{i}{b}", rasp.tokens, rasp.indices, rasp.tokens
).named("nary_concat")
