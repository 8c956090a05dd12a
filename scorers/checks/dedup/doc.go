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
// A document is not read word by word to its end. Words are found in
// its raw bytes (lower-cased on the fly) and looked up by a cheap key,
// their first 8 bytes and their length; an all-ASCII document first gets
// a bitmap of its word bytes from one branch-free pass, 64 bytes a step
// (AVX2 on amd64 CPUs that have it), and its words and their count come
// from the bitmap. Each test reads only what can still change its
// answer, and all of it is lossless (TestMatchesReference
// and FuzzMatchReference hold the matches, kinds, offsets and Jaccard
// values to those of the matcher that read every word, kept in
// ref_test.go):
//
//   - jaccard: J(I,D) >= t needs |D∩I| >= t|D∪I| >= t|D|, so at most
//     (1-t)|D| of the document's distinct shingles are in no item, and a
//     match has |D| <= limit = (largest item)/t. The words are read from
//     the start while the shingles in no item (a Bloom filter over every
//     shingle of every item; a shingle of keys stands for a shingle of
//     words, as two with different keys differ) stay at most
//     (1-t)*min(limit, shingle positions of the document) distinct ones;
//     past that no item can reach t and the Jaccard part stops. The
//     shingle positions are known from the bitmap, or once the document
//     is read to its end; a document with fewer positions than t times the
//     smallest item's shingles is never read for Jaccard. In an all-ASCII
//     document the exact part's samples (below) count first: a sampled
//     word pair in no item (a filter over the consecutive word pairs of
//     the items) shows that the shingle ending with it is in no item;
//     misses are told apart by their shingle's last pair, a function of
//     the shingle, so the distinct count stays a lower bound, and most
//     paragraphs are ruled out before any word is read one by one. Only
//     documents not ruled out are hashed in full and checked by prefix filtering as
//     before: J >= t needs |I∩D| >= t|I|, so a matching document holds one
//     of any |I|-ceil(t|I|)+1 shingles of the item, and only that many,
//     the rarest, are indexed; a candidate is checked exactly against the
//     document's distinct shingles.
//   - exact: any occurrence of a long prompt holds its interior words
//     (not the first and last, which the corpus may extend: "bathe cat"
//     contains "the cat") as words of the document, and spans at least as
//     many raw bytes as its normalised form has runes (whitespace runs
//     only collapse). Each long prompt of 4 or more words indexes a run of
//     consecutive interior word pairs whose span reaches the stride S (the
//     shortest such span over all prompts, at most 64 bytes), the run
//     rarest among the prompts; one of 3 words indexes its middle word.
//     The document is sampled (an all-ASCII one from its start, another
//     past the words read for Jaccard, whose pairs are all looked up):
//     the first word starting after a position and
//     the word after it, then the next position S-1 bytes past that word,
//     so no S bytes of an occurrence's run go unsampled. Only a hit
//     normalises the document and searches it (bytes.Contains). If S
//     would be under 8 bytes, every word pair is looked up instead. Long
//     prompts of 1 or 2 words (Thai, Khmer, Lao or Burmese text, written
//     without spaces, is one "word" per phrase) fall back to byte anchors:
//     when the index holds any, each document is normalised and a W-byte
//     window (W = 32) is hashed every S bytes (S = 12 for the default
//     minimum length); each such prompt stores S consecutive windows, so
//     any occurrence puts one on a sampled position.
//
// Short prompts are indexed by the hash of their word sequence, compared with
// each line's and the whole document's (read only up to one word more than
// the longest short prompt), and confirmed by normalising.
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
