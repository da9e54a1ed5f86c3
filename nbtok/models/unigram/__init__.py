"""The Unigram model's kernels: Viterbi over the trie, its word cache and automaton, sampling, n-best, and HF's per-word Unigram."""
