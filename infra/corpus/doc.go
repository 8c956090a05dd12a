// Package corpus reads training corpora for the contamination screen
// (scorers/checks/dedup): it lists corpus files (local paths, globs,
// directories and s3:// prefixes), cuts them into byte-range shards, opens
// them (a local file with a seek, an S3 object with ranged GETs), splits the
// stream into documents and screens the documents of a shard with a
// dedup.Matcher, resumably (Scanner, Checkpoint).
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
// # Where the corpus lives
//
// Expand resolves corpus entries: local paths, globs and directories, and
// s3://bucket/prefix/?endpoint=...&region=...&path_style=...&access_key_env=...&secret_key_env=...
// prefixes (the query of an S3 store URI; see s3.go). Open reads either: a
// local file with a seek, an S3 object with ranged GETs of S3ChunkBytes from
// the shard's (or checkpoint's) offset, so a large object splits across
// shards on any number of workers exactly as a local file does.
package corpus
