// Package dedup finds eval items that occur in a training corpus, so they can
// be dropped before scoring (spec §6: hard exclusion, never flagged-and-kept).
//
// The eval items are small (tens of thousands of prompts) and are indexed in
// memory; the corpus (up to terabytes) is streamed once, in byte-range shards
// that any number of workers can screen in parallel, and is never held in
// memory: memory is bounded by the index plus one document.
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
// # Documents
//
// Corpus files are plain text, "lines" text or JSONL, optionally gzip or zstd
// compressed (from the name: .gz, .zst). In text, a document is a run of
// non-empty lines ended by an empty line ("\n" or "\r\n" alone) or the end of
// the file: the layout of CC-100 and OSCAR-style dumps, where a blank line
// separates documents and a line is a paragraph. A text file without empty
// lines should be read with the lines format (every non-empty line is a
// document); otherwise it is one document and fails the MaxDocBytes bound.
// In JSONL, every non-empty line is a JSON object and the document is its
// string field named by TextField (default "text"). A document starts at the
// first byte of its first line.
//
// # Shards and resuming
//
// Plan splits uncompressed files into byte ranges; a shard screens the
// documents that START in [Start, End) and reads on past End to finish the
// last one. Whether a line starts a document depends only on the line and the
// three bytes before it, so a reader started at any offset agrees with one
// started at 0: every document belongs to exactly one shard, and a shard
// restarted from a Checkpoint offset finishes with the same result.
// Compressed files cannot be split; they are one shard each and their offsets
// count decompressed bytes (resuming decompresses and discards up to the
// checkpoint).
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
// Nothing is normalised or sorted for a document without a hit. On the
// synthetic benchmark (testdata/dedup/bench.sh: 50,000 items, 300 MB of
// pseudo-Malay paragraphs) one core screens about 230 MB per CPU-second on
// the shared 2-core development VM, where grep -F -f with the same 50,000
// prompts (exact part only, no normalisation) does 17 to 19; see
// testdata/dedup/README.md.
//
// The result fingerprint is KeptSHA256 over the kept item ids; corpus files
// are fingerprinted by FingerprintSource: local files by name, size and
// SHA-256, S3 objects by name, size and the ETag every read required.
//
// # Where the corpus lives
//
// Expand resolves corpus entries: local paths, globs and directories, and
// s3://bucket/prefix/?endpoint=...&region=...&path_style=...&access_key_env=...&secret_key_env=...
// prefixes (the query of an S3 store URI; see s3.go). Open reads either: a
// local file with a seek, an S3 object with ranged GETs of S3ChunkBytes from
// the shard's (or checkpoint's) offset, so a large object splits across
// shards on any number of workers exactly as a local file does.
package dedup
