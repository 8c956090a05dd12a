package gguf

import (
	"fmt"
	"strings"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/chattemplate"
)

// chatFormat renders chat messages into a prompt that ends where the
// assistant's reply begins. stops are extra stop strings the format implies.
type chatFormat struct {
	name   string
	render func(msgs []backends.Message) string
	stops  []string
	tmpl   *chattemplate.Template // the model's own template (see chattemplate.go)
	why    string                 // when render and tmpl are nil: why there is no format
}

// ok reports whether the format can render chat messages.
func (c chatFormat) ok() bool { return c.render != nil || c.tmpl != nil }

// ChatFormats lists the names Options.ChatFormat accepts.
var ChatFormats = []string{"qa", "chatml", "llama3", "gemma"}

func namedChatFormat(name string) (chatFormat, bool) {
	switch name {
	case "qa":
		return chatFormat{name: "qa", render: renderQA, stops: []string{"\n"}}, true
	case "chatml":
		return chatFormat{name: "chatml", render: renderChatML, stops: []string{"<|im_end|>"}}, true
	case "llama3":
		return chatFormat{name: "llama3", render: renderLlama3, stops: []string{"<|eot_id|>"}}, true
	case "gemma":
		return chatFormat{name: "gemma", render: renderGemma, stops: []string{"<end_of_turn>"}}, true
	}
	return chatFormat{}, false
}

// pickChatFormat chooses the format named in opt, else the GGUF's own
// tokenizer.chat_template, rendered by the Jinja engine (chattemplate.go).
// A model without a template, or with one the engine cannot parse, still
// loads: only chat requests fail, with an error saying why.
func pickChatFormat(f *File, name string) (chatFormat, error) {
	if name != "" {
		cf, ok := namedChatFormat(name)
		if !ok {
			return chatFormat{}, fmt.Errorf("unknown chat format %q (want one of %s)", name, strings.Join(ChatFormats, ", "))
		}
		return cf, nil
	}
	tmpl, ok, err := f.metaString("tokenizer.chat_template")
	if err != nil {
		return chatFormat{}, err
	}
	if !ok {
		return chatFormat{why: "the model has no tokenizer.chat_template"}, nil
	}
	return modelTemplate(tmpl), nil
}

// Render applies the chat format, or explains why there is none.
func (c chatFormat) Render(msgs []backends.Message) (string, error) {
	if c.render == nil {
		return "", fmt.Errorf("cannot format chat messages: %s; %s", c.why, nameAFormat)
	}
	return c.render(msgs), nil
}

// renderQA is testdata/models/tiny-llama/qa.jinja: system turns are dropped.
// An answer ends at its line's end, so the format stops generation at "\n".
func renderQA(msgs []backends.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case "user":
			b.WriteString("Question: " + m.Content + "\nAnswer:")
		case "assistant":
			b.WriteString(" " + m.Content + "\n")
		}
	}
	return b.String()
}

func renderChatML(msgs []backends.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}

func trimSpace(s string) string { return strings.Trim(s, " \t\n\r\v\f") }

func renderLlama3(msgs []backends.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|start_header_id|>" + m.Role + "<|end_header_id|>\n\n" + trimSpace(m.Content) + "<|eot_id|>")
	}
	b.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
	return b.String()
}

// renderGemma merges system text into the next user turn, as Gemma has no
// system role.
func renderGemma(msgs []backends.Message) string {
	var b strings.Builder
	system := ""
	for _, m := range msgs {
		if m.Role == "system" {
			system += trimSpace(m.Content)
			continue
		}
		role := m.Role
		if role == "assistant" {
			role = "model"
		}
		b.WriteString("<start_of_turn>" + role + "\n")
		if system != "" && role != "model" {
			b.WriteString(system + "\n\n")
			system = ""
		}
		b.WriteString(trimSpace(m.Content) + "<end_of_turn>\n")
	}
	b.WriteString("<start_of_turn>model\n")
	return b.String()
}
