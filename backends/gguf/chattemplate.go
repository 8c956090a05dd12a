package gguf

import (
	"fmt"
	"strings"
	"time"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/chattemplate"
)

// modelTemplate compiles the GGUF's own tokenizer.chat_template. A template
// the Jinja engine cannot parse leaves the model loadable (log-likelihoods
// need no template) but makes chat requests fail with the engine's error,
// which names the construct.
func modelTemplate(src string) chatFormat {
	t, err := chattemplate.Compile("tokenizer.chat_template", src)
	if err != nil {
		return chatFormat{why: err.Error()}
	}
	return chatFormat{name: "tokenizer.chat_template", tmpl: t}
}

// nameAFormat tells how to use a built-in chat format instead.
var nameAFormat = "name a chat format (" + strings.Join(ChatFormats, ", ") + "): chat_format in the config, or ?chat= in the gguf spec"

// renderChat applies the model's chat format to msgs; errors name the
// model file.
func (m *Model) renderChat(msgs []backends.Message) (string, error) {
	var prompt string
	var err error
	if m.chat.tmpl != nil {
		if prompt, err = m.chat.tmpl.Render(m.chatInput(msgs)); err != nil {
			err = fmt.Errorf("cannot format chat messages: %w; %s", err, nameAFormat)
		}
	} else {
		prompt, err = m.chat.Render(msgs)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", m.path, err)
	}
	return prompt, nil
}

// chatInput is what llama-server gives the model's own template: the
// vocabulary's BOS and EOS text, add_generation_prompt, the date, and a
// leading BOS text cut when the tokenizer adds BOS itself. enable_thinking
// is false (llama-server --reasoning off): an evaluation scores the answer,
// and this backend does not split a reasoning block from it.
func (m *Model) chatInput(msgs []backends.Message) chattemplate.Input {
	return chattemplate.Input{
		Messages: msgs, AddGenerationPrompt: true,
		BOS: m.tok.specialText(m.tok.BOS), EOS: m.tok.specialText(m.tok.EOS),
		AddBOS: m.tok.AddsBOS(), AddEOS: m.tok.addEOS && m.tok.EOS >= 0,
		Now: time.Now(),
	}
}

// specialText is a token's text as llama.cpp's common_token_to_piece with
// special=true gives it: control tokens as written, not as nothing.
func (t *Tokenizer) specialText(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	if t.types[id] == tokControl || t.types[id] == tokUnknown {
		return t.pieces[id]
	}
	return t.Piece(id)
}
