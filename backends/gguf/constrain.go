package gguf

import (
	"encoding/json"
	"fmt"

	"github.com/glossobench/glossobench/backends/grammar"
)

// maxGrammars bounds the schemas whose grammar state a model keeps; a judge
// sends one schema per kind, so a handful is plenty.
const maxGrammars = 16

// constraint returns the grammar constraint of a request's JSON schema, made
// once per schema and kept with its caches, so later requests with the same
// schema find most masks already computed. The caller holds m.mu.
func (m *Model) constraint(schema map[string]any) (*grammar.Constraint, error) {
	key, err := json.Marshal(schema) // map keys sorted: one key per schema
	if err != nil {
		return nil, fmt.Errorf("json_schema: %w", err)
	}
	if c, ok := m.grammars[string(key)]; ok {
		return c, nil
	}
	g, err := grammar.FromSchema(schema)
	if err != nil {
		return nil, err
	}
	if m.vocab == nil {
		// The text each token adds to the output, as Decode writes it:
		// control and unknown tokens add none and are never allowed
		// (llama.cpp renders them as their text, "<s>" and the like).
		pieces := make([]string, m.tok.VocabSize())
		eog := make([]bool, len(pieces))
		for id := range pieces {
			pieces[id], eog[id] = m.tok.Piece(id), m.tok.IsEOG(id)
		}
		m.vocab = grammar.NewVocab(pieces, eog)
	}
	if m.grammars == nil || len(m.grammars) >= maxGrammars {
		m.grammars = map[string]*grammar.Constraint{}
	}
	c := grammar.NewConstraint(g, m.vocab)
	m.grammars[string(key)] = c
	return c, nil
}

// allowed reports whether token id is in the mask (nil: every token).
func allowed(mask []uint64, id int) bool {
	return mask == nil || id/64 < len(mask) && mask[id/64]>>(id%64)&1 == 1
}
