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
//     a 40-word prompt falls to about 0.4, whereas with n = 5 a one-word edit
//     of a 60-word prompt stays above 0.8 and a three-word edit falls below.
//     Jaccard is computed exactly on the full shingle sets (no MinHash
//     estimate); items with fewer than n words have no shingles and are
//     screened by the exact test only. Note Jaccard compares whole
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
// The exact test samples the normalised document every S bytes (S = 12 for
// the default minimum length) and hashes a W-byte window there (W = 32). Each
// long prompt indexes S consecutive windows, chosen where its windows are
// rarest among all prompts, so any occurrence puts exactly one of them on a
// sampled position; a hit is verified byte for byte. The Jaccard test uses
// prefix filtering: J >= t needs |I∩D| >= t|I|, so a matching document holds
// at least one of any |I|-ceil(t|I|)+1 shingles of the item; only that many,
// the rarest, are indexed. A document with more distinct shingles than
// (largest item)/t cannot reach t and its words are not hashed past that
// point. Both lookups go through a bitset filter that stays in cache.
//
// The result fingerprint is KeptSHA256 over the kept item ids; corpus files
// are fingerprinted by FingerprintFile (name, size, SHA-256).
package dedup
