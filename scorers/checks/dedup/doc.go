// Package dedup finds eval items that occur in a training corpus, so they can
// be dropped before scoring (spec §6: hard exclusion, never flagged-and-kept).
//
// The eval items are small (tens of thousands of prompts) and are indexed in
// memory; the corpus (up to terabytes) is streamed once by infra/corpus, in
// byte-range shards that any number of workers can screen in parallel, and
// is never held in memory: memory is bounded by the index plus one document.
// This package is the matching: a Matcher screens one document at a time
// against an Index, and MergeMatches and Summarize turn the matches of all
// shards into the Report.
//
// An item is contaminated by a corpus document when
//
//   - exact: its normalised prompt (Unicode whitespace runs collapsed to one
//     space and trimmed, letters lower-cased) is a substring of the normalised
//     document, for prompts of at least Options.MinExactLen characters
//     (default 50). Shorter prompts are too generic to search inside text
//     ("Apakah ibu negara Malaysia?") and match only a whole normalised
//     document or a whole normalised line of one (KindWhole).
//   - jaccard: the Jaccard similarity of the two sets of word n-gram
//     shingles reaches Options.Jaccard. Words are maximal runs of letters,
//     digits and marks of the normalised text, so punctuation changes do not
//     matter. Defaults n = 5, threshold 0.8: the NearDup setting of Lee et
//     al. (2022, "Deduplicating Training Data Makes Language Models Better":
//     5-gram MinHash, Jaccard >= 0.8). Eval prompts are short (a Malay MCQ
//     stem is often 15 to 60 words); with n = 13 (the GPT-3 overlap test) a
//     single changed word removes up to 13 shingles and a one-word edit of
//     a 40-word prompt falls to 15/41 = 0.37, whereas with n = 5 a one-word
//     edit of a 60-word prompt stays at 51/61 = 0.84 and a two-word edit
//     falls to 46/66 = 0.70 (TestPlantedContamination plants both).
//     Jaccard is computed exactly on the full shingle sets (no MinHash
//     estimate); items with fewer than n words have no shingles and are
//     screened by the exact test only. In scripts without spaces a "word"
//     is a phrase, so their shingles are coarse. Note Jaccard compares whole
//     documents: a prompt paraphrased inside a long web page is not caught
//     by it (only by the exact test), which is what Jaccard means.
//
// Items sharing a TaskID are one task; a task is contaminated when any of its
// items is, and all of its items are dropped (Summarize).
//
// # Speed
//
// One pass over each document's raw bytes splits it into words (lower-cased
// on the fly; an ASCII word of up to 8 bytes is hashed from a single load)
// and rolls a hash over every word n-gram. Each n-gram is looked up once, in
// one table behind a cache-resident Bloom-style bitset, which serves both
// tests:
//
//   - exact: every long prompt is indexed by one of its interior n-grams
//     (one without its first and last word, which the corpus may extend:
//     "bathe cat" contains "the cat"), the rarest among all prompts. Any
//     occurrence of the prompt puts that n-gram in the document, so the
//     document is normalised and searched (bytes.Contains) only on such a
//     hit. Of the interior n-grams the one rarest among the prompts, then
//     with the longest words, is used. Long prompts of 3 to n+1 words use
//     their longest interior word instead. Long prompts of 1 or 2 words
//     (Thai, Khmer, Lao or Burmese text, written without spaces, is one
//     "word" per phrase) fall back to byte anchors: when the index holds
//     any, each document is normalised and a W-byte window (W = 32) is
//     hashed every S bytes (S = 12 for the default minimum length); each
//     such prompt stores S consecutive windows, so any occurrence puts one
//     on a sampled position. That path costs about twice the word path.
//   - jaccard: prefix filtering. J >= t needs |I∩D| >= t|I|, so a matching
//     document holds at least one of any |I|-ceil(t|I|)+1 shingles of the
//     item; only that many, its rarest, are indexed. A candidate is checked
//     exactly against the document's distinct shingles, counted in a small
//     hash set that stops at (largest item)/t: a longer document cannot
//     reach t with any item.
//
// Short prompts are indexed by the hash of their word sequence, compared with
// each line's and the whole document's, and confirmed by normalising.
// Nothing is normalised or sorted for a document without a hit. The
// throughput figures, beside GNU grep, ripgrep and cat on the same synthetic corpus,
// and the command that measures them (task bench-dedup, i.e.
// testdata/dedup/bench.sh) are in docs/BENCHMARKS.md and
// testdata/dedup/README.md.
//
// The result fingerprint is KeptSHA256 over the kept item ids; corpus files
// are fingerprinted by infra/corpus.FingerprintSource: local files by name,
// size and SHA-256, S3 objects by name, size and the ETag every read required.
package dedup
