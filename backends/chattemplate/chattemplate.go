// Package chattemplate renders a model's own Jinja chat template (the GGUF's
// tokenizer.chat_template) the way llama.cpp's llama-server renders it for
// /apply-template and /v1/chat/completions: the same variables, the same
// adjustments of the messages for what the template supports, and the same
// trimming of BOS and EOS text. The Jinja engine is github.com/ardanlabs/jinja,
// a maintained pure-Go implementation written for GGUF chat templates.
package chattemplate

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ardanlabs/jinja"

	"github.com/glossobench/glossobench/backends"
)

// Template is a compiled chat template and what it supports.
type Template struct {
	origin string // where the template came from, for errors
	tmpl   *jinja.Template
	// systemRole is false when the template does not render a leading
	// system message (it drops it or raises on it); llama.cpp then merges
	// the system text into the next message.
	systemRole bool
	// typedOnly is true when the template renders content only as a list
	// of {"type": "text", "text": ...} parts, not as a string.
	typedOnly bool
	// trimContent: llama.cpp trims every message's content for StepFun's
	// template, found by its tool preamble (workaround::trim_all_content).
	trimContent bool
}

// Input is one rendering request.
type Input struct {
	Messages []backends.Message
	// AddGenerationPrompt ends the prompt where the assistant's reply
	// begins (llama-server's default).
	AddGenerationPrompt bool
	// BOS and EOS are the text of the vocabulary's BOS and EOS tokens
	// (bos_token, eos_token in the template).
	BOS, EOS string
	// AddBOS and AddEOS say the tokenizer adds BOS and EOS itself: a
	// leading BOS text (trailing EOS text) is then cut from the prompt so
	// the token is not doubled, as llama.cpp does.
	AddBOS, AddEOS bool
	// EnableThinking is the template's enable_thinking. llama-server sets
	// it when the template has a reasoning mode, unless started with
	// --reasoning off; an evaluation wants the answer, and this renderer
	// cannot split reasoning from it, so callers normally leave it false.
	EnableThinking bool
	// Now is the time strftime_now, datetime and date_string report;
	// llama-server uses the wall clock in local time.
	Now time.Time
}

// Error is a template that cannot be compiled or rendered. It names the
// template's origin and the Jinja construct the engine refused.
type Error struct {
	Origin string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %v", e.Origin, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Compile parses src; origin (a file or model name) is named in errors.
// A template the engine cannot parse is an *Error naming the construct.
func Compile(origin, src string) (*Template, error) {
	norm, err := normalizeWhitespace(src)
	if err != nil {
		return nil, &Error{Origin: origin, Err: err}
	}
	tmpl, err := jinja.Compile(norm)
	if err != nil {
		return nil, &Error{Origin: origin, Err: err}
	}
	t := &Template{origin: origin, tmpl: tmpl,
		trimContent: strings.Contains(src, "You have access to the following functions in JSONSchema format")}
	t.detectCaps()
	return t, nil
}

// detectCaps probes the template as llama.cpp's jinja::caps_get does, with
// the same probe messages: llama.cpp watches which values the template reads,
// which this engine cannot, so a value counts as read when it shows in the
// output.
func (t *Template) detectCaps() {
	const marker = "STRING_MARKER"
	probe := func(msgs []jinja.Value) (string, bool) {
		out, err := t.tmpl.RenderValues(map[string]jinja.Value{
			"messages": jinja.NewList(msgs), "tools": jinja.NewList(nil),
			"bos_token": jinja.NewString(""), "eos_token": jinja.NewString(""),
			"add_generation_prompt": jinja.NewBool(true),
		})
		return out, err == nil
	}
	out, ok := probe([]jinja.Value{message("user", jinja.NewString(marker))})
	if !ok || !strings.Contains(out, marker) {
		if out, ok := probe([]jinja.Value{message("user", textParts(marker))}); ok && strings.Contains(out, marker) {
			t.typedOnly = true
		}
	}
	out, _ = probe([]jinja.Value{
		message("system", t.content("System message")),
		message("user", t.content("User message")),
	})
	t.systemRole = strings.Contains(out, "System message")
}

func message(role string, content jinja.Value) jinja.Value {
	m := jinja.NewDict()
	m.AsDict().Set("role", jinja.NewString(role))
	m.AsDict().Set("content", content)
	return m
}

// content is a message's content as the template takes it.
func (t *Template) content(s string) jinja.Value {
	if !t.typedOnly {
		return jinja.NewString(s)
	}
	return textParts(s)
}

// textParts is s as a list of one {"type": "text", "text": s} part.
func textParts(s string) jinja.Value {
	part := jinja.NewDict()
	part.AsDict().Set("type", jinja.NewString("text"))
	part.AsDict().Set("text", jinja.NewString(s))
	return jinja.NewList([]jinja.Value{part})
}

// Render renders the messages into a prompt.
func (t *Template) Render(in Input) (string, error) {
	msgs := in.Messages
	if t.trimContent {
		msgs = append([]backends.Message(nil), msgs...)
		for i := range msgs {
			msgs[i].Content = strings.Trim(msgs[i].Content, " \t\n\v\f\r")
		}
	}
	if !t.systemRole && len(msgs) > 0 && msgs[0].Role == "system" {
		// llama.cpp's workaround::system_message_not_supported.
		rest := append([]backends.Message(nil), msgs[1:]...)
		if len(rest) > 0 {
			rest[0].Content = msgs[0].Content + "\n" + rest[0].Content
		}
		msgs = rest
	}
	list := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		role := m.Role
		if role == "developer" {
			role = "system" // llama.cpp's map_developer_role_to_system
		}
		list[i] = message(role, t.content(m.Content))
	}
	now := in.Now
	vars := map[string]jinja.Value{
		"messages":        jinja.NewList(list),
		"bos_token":       jinja.NewString(in.BOS),
		"eos_token":       jinja.NewString(in.EOS),
		"enable_thinking": jinja.NewBool(in.EnableThinking),
		// llama-server's default --reasoning-preserve, which it passes to
		// every template (jinja::caps_apply_preserve_reasoning).
		"preserve_reasoning":        jinja.NewBool(true),
		"preserve_thinking":         jinja.NewBool(true),
		"clear_thinking":            jinja.NewBool(false),
		"truncate_history_thinking": jinja.NewBool(false),
		"drop_thinking":             jinja.NewBool(false),
		// llama.cpp's common_chat_extra_context.
		"datetime":    jinja.NewString(strftime(now, "%b %d %Y")),
		"date_string": jinja.NewString(strftime(now, "%d %b %Y")),
		"strftime_now": jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			if len(args) != 1 || !args[0].IsString() {
				return jinja.Undefined(), errors.New("strftime_now: want one string argument")
			}
			s, err := strftimeChecked(now, args[0].AsString())
			return jinja.NewString(s), err
		}),
	}
	if in.AddGenerationPrompt {
		// llama.cpp leaves add_generation_prompt undefined rather than false.
		vars["add_generation_prompt"] = jinja.NewBool(true)
	}
	out, err := t.tmpl.RenderValues(vars)
	if err != nil {
		return "", &Error{Origin: t.origin, Err: err}
	}
	if in.AddBOS && in.BOS != "" {
		out = strings.TrimPrefix(out, in.BOS)
	}
	if in.AddEOS && in.EOS != "" {
		out = strings.TrimSuffix(out, in.EOS)
	}
	return out, nil
}
