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
var ChatFormats = chattemplate.FormatNames

// namedChatFormat is a built-in format; chattemplate defines them once for
// every backend, so an HTTP model given the same name renders the same prompt.
func namedChatFormat(name string) (chatFormat, bool) {
	f, ok := chattemplate.Named(name)
	if !ok {
		return chatFormat{}, false
	}
	return chatFormat{name: f.Name, render: f.Render, stops: f.Stops}, true
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
