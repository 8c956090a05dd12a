// Package dataset reads dataset files and maps their rows to items, so a
// dataset is declared in the run config instead of in Go.
//
// # Sources
//
// A dataset's path is a local file, s3://bucket/key?endpoint=... (the query
// of an S3 store URI; registered by infra/datasource) or
// hf://datasets/OWNER/NAME@REVISION/PATH (a Hugging Face Hub file, fetched
// once into a local cache and pinned by the config's sha256; registered by
// infra/datasource). The file is JSON Lines (or one JSON array of records),
// CSV or TSV (the first record names the columns; every value is text) or
// Parquet (Hugging Face's on-disk and Hub format), by file_format or by the
// name (.csv, .tsv, .parquet, anything else JSONL), plain or compressed
// (.gz, .zst, .zstd). A sha256 pin is checked before any row is used.
//
// # Fields
//
// A dataset's fields map item fields to values of a row. Each value is
// either a column or a template:
//
//   - A column is a name, or a dotted path into nested records and lists:
//     prompts.0.text is the text field of the first element of prompts. A
//     missing column is an error naming the file, the line and the column;
//     with a trailing "?" (id: sample_id?) it reads as empty instead.
//   - A template is Go text/template (https://pkg.go.dev/text/template)
//     over the row, recognised by "{{": {{.question}} is the question
//     column, {{index .prompts 0 "text"}} a nested one. A column a template
//     names and the row lacks is an error naming the file, line and column.
//     Besides the built-in functions (and, or, not, index, len, printf, ...)
//     templates may call: opt ROW PATH (a column path, "" when missing, e.g.
//     {{opt . "metadata.language"}}), default D V (V, or D when V is null:
//     {{.note | default ""}}), datasetLang (the dataset's configured
//     lang), letter I (the option letter of a 0-based index), join SEP LIST,
//     trim, lower, upper. A constant is a template too: {{"ms"}}.
//     A template prints values as data: numbers as the shortest decimal
//     that reads back the same (1500001, 0.1; an exponent only from 1e21
//     and below 1e-6), lists and records as JSON. A null it prints is an
//     error naming the file, the line, the mapping key and the action
//     ({{.note}}), never "<no value>": default says what to print instead.
//
// For CSV, TSV and Parquet files the columns every field reads are checked
// against the header (or schema) before the first row: a missing one names
// the file, the header line, the field and the column.
//
// # Text
//
// A value an item is built from must be text as written: a string that is
// not UTF-8 or holds a NUL byte is an error naming the file, the line and
// the field (or, for a template, the mapping key). A JSON line or record
// holding invalid UTF-8 or an unpaired surrogate escape (\ud800), which
// encoding/json would turn into U+FFFD, is refused whichever column holds
// it (CheckJSON). Empty texts an axis needs (an option before a given one,
// a question, a prompt) are errors of the axis's reader.
//
// # Fields by axis kind (Kinds)
//
// Multiple choice (knowledge, nlu, cultural): question (or premise and
// hypothesis for NLI, or prompt for the whole prompt text), passage,
// choices (a list of columns, trailing empty values dropped, or one column
// holding a list), or choices_text (one text of lettered lines "A: ...", "A.
// ..." or "A) ..."), or choice_texts (fixed options by item language, "*"
// for the others); answer, read as answer_as says: auto (a letter or a
// 0-based index, the default), letter, index or text (an option's text); or,
// with labels (the answer values in option order), the label. An answer
// outside the options is an error naming the file, the line and the field.
// id (default the line number), source (the leakage audit's pooling tag;
// default the dataset), lang (default the dataset's lang) and register
// (HIGH, MID or LOW per row) apply to every kind. The built-in formats
// (global_mmlu, belebele, indonli, kalahi) are presets of these fields, and
// a dataset's own fields replace a preset's entries of the same name.
//
// Safety: prompt, label, and the label values meaning harmful and safe
// (harmful: [Harmful, Berbahaya], safe: [Safe, Selamat]); a label that is
// neither is an error naming the file, the line and the field; topic is
// the breakdown (default the source). The built-in seahelm_safeguard and
// seahelm_safeguard_cultural are presets (filter: topic or label).
//
// Generation with references (nlg): prompt (the whole instruction, usually
// a template over the source column), references (a text or a list; an
// empty one is an error), text (the source text, for reports and MetricX),
// direction (SRC-TGT, default the dataset's lang when written en-ms),
// answer_tag (the label the prompt asks the translation to follow; the
// text after it is scored) and task (items sharing it are one task for
// contamination screening). The built-in flores_passages (one mapping per
// configured direction) and seahelm_flores (SEA-HELM's prompt templates
// and few-shot examples, as template functions of the preset) are presets.
//
// Instruction following (if): prompt, instruction_ids (IFEval's
// instruction_id_list: a list, or a text holding a JSON list, or one id)
// and kwargs (a list of records, one per instruction, or a text holding
// that JSON list, as a CSV column does); every instruction is checked at
// load (unknown ids and kwargs are errors naming the file, line and key).
// id is the prompt's key. Declared datasets follow IFEval's rules; the
// built-in ifeval and sea_ifeval (SEA-HELM's rows, kwargs renamed to
// IFEval's, the dataset's lang keeping that language's rows) are presets.
//
// Multi-turn conversations (mt): id, turns (the user turns, a list),
// category, and references (optional reference answers, used for the
// categories judged against one: math, reasoning, coding). The built-in
// mt_bench (FastChat's question.jsonl) is a preset.
//
// Every preset of every kind takes fields: a dataset's own fields replace
// the preset's entries of the same name, so register: COLUMN gives a
// built-in format's rows their own register.
//
// Every key is checked when the config loads: an unknown key, a key the
// axis does not read, a missing required key, a template that does not
// parse or an unknown answer_as is an error naming the config line and the
// key.
package dataset
