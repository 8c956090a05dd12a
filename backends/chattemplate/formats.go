package chattemplate

import (
	"strings"

	"github.com/glossobench/glossobench/backends"
)

// Format is a built-in chat format: what a config's chat_format names for a
// model without a usable template of its own. It is rendered here, above
// the backends, so that the embedded GGUF runtime and an HTTP server (to
// whose completion endpoint the rendered text is sent, as
// lm-evaluation-harness's apply_chat_template does) see the same prompt and
// stop at the same strings.
type Format struct {
	Name string
	// Stops are the stop strings the format implies: the end of a turn.
	Stops  []string
	render func(msgs []backends.Message) string
}

// Render returns the prompt for msgs, ending where the assistant's reply begins.
func (f Format) Render(msgs []backends.Message) string { return f.render(msgs) }

// FormatNames lists the names Named accepts.
var FormatNames = []string{"qa", "chatml", "llama3", "gemma"}

// Named returns the built-in format called name.
func Named(name string) (Format, bool) {
	switch name {
	case "qa":
		return Format{Name: "qa", render: renderQA, Stops: []string{"\n"}}, true
	case "chatml":
		return Format{Name: "chatml", render: renderChatML, Stops: []string{"<|im_end|>"}}, true
	case "llama3":
		return Format{Name: "llama3", render: renderLlama3, Stops: []string{"<|eot_id|>"}}, true
	case "gemma":
		return Format{Name: "gemma", render: renderGemma, Stops: []string{"<end_of_turn>"}}, true
	}
	return Format{}, false
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
