package chattemplate

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ardanlabs/jinja"

	"github.com/glossobench/glossobench/backends"
)

// conversations are the cases rendered against llama-server (the gated
// TestChatTemplatesMatchLlamaServer in backends/gguf uses the same three).
var conversations = map[string]struct {
	msgs []backends.Message
	gen  bool
}{
	"sys_user": {[]backends.Message{{Role: "system", Content: "You are a helpful assistant."}, {Role: "user", Content: "Apa khabar?"}}, true},
	"multi": {[]backends.Message{{Role: "system", Content: "Jawab dalam Bahasa Melayu."}, {Role: "user", Content: "Siapa nama awak?"},
		{Role: "assistant", Content: "Saya pembantu."}, {Role: "user", Content: "Terima kasih!"}}, true},
	"user_nogen": {[]backends.Message{{Role: "user", Content: "Hello"}}, false},
}

// The templates in testdata exercise what llama.cpp adds around the Jinja
// engine: a template without a system role (the system text joins the next
// turn), date_string and strftime_now, typed content parts, BOS cut when the
// tokenizer adds it, add_generation_prompt left undefined when off, and
// trim_blocks after a tag followed by an expression. The expected strings
// are llama-server's /apply-template output for the tiny model (BOS "<s>",
// EOS "</s>", add_bos) with the template as --chat-template-file, taken on
// the date below; the gated test checks them again against a live server.
func TestRenderMatchesLlamaServer(t *testing.T) {
	now := time.Date(2026, 12, 1, 22, 40, 0, 0, time.Local)
	want := []struct{ tmpl, conv, prompt string }{
		{"blocks", "sys_user", "S: You are a helpful assistant.\nQ: Apa khabar?\nA:"},
		{"blocks", "multi", "S: Jawab dalam Bahasa Melayu.\nQ: Siapa nama awak?\nA: Saya pembantu.</s>\nQ: Terima kasih!\nA:"},
		{"blocks", "user_nogen", "Q: Hello\n"},
		{"dated", "sys_user", "<|header|>system<|/header|>\n\nToday: 01 Dec 2026 (Tuesday 1 December 2026)\n\nYou are a helpful assistant.<|eot|><|header|>user<|/header|>\n\nApa khabar?<|eot|><|header|>assistant<|/header|>\n\n"},
		{"dated", "multi", "<|header|>system<|/header|>\n\nToday: 01 Dec 2026 (Tuesday 1 December 2026)\n\nJawab dalam Bahasa Melayu.<|eot|><|header|>user<|/header|>\n\nSiapa nama awak?<|eot|><|header|>assistant<|/header|>\n\nSaya pembantu.<|eot|><|header|>user<|/header|>\n\nTerima kasih!<|eot|><|header|>assistant<|/header|>\n\n"},
		{"dated", "user_nogen", "<|header|>system<|/header|>\n\nToday: 01 Dec 2026 (Tuesday 1 December 2026)\n\n<|eot|><|header|>user<|/header|>\n\nHello<|eot|>"},
		{"parts", "sys_user", "[SYSTEM]You are a helpful assistant.[USER]Apa khabar?[ASSISTANT]"},
		{"parts", "multi", "[SYSTEM]Jawab dalam Bahasa Melayu.[USER]Siapa nama awak?[ASSISTANT]Saya pembantu.[USER]Terima kasih![ASSISTANT]"},
		{"parts", "user_nogen", "[USER]Hello[END]"},
		{"turns", "sys_user", "  <turn>user\nYou are a helpful assistant.\nApa khabar?</turn>\n<turn>model\n"},
		{"turns", "multi", "  <turn>user\nJawab dalam Bahasa Melayu.\nSiapa nama awak?</turn>\n  <turn>model\nSaya pembantu.</turn>\n  <turn>user\nTerima kasih!</turn>\n<turn>model\n"},
		{"turns", "user_nogen", "  <turn>user\nHello</turn>\n"},
	}
	for _, w := range want {
		src, err := os.ReadFile("testdata/" + w.tmpl + ".jinja")
		if err != nil {
			t.Fatal(err)
		}
		tm, err := Compile(w.tmpl, string(src))
		if err != nil {
			t.Fatal(err)
		}
		c := conversations[w.conv]
		got, err := tm.Render(Input{Messages: c.msgs, AddGenerationPrompt: c.gen, BOS: "<s>", EOS: "</s>", AddBOS: true, Now: now})
		if err != nil || got != w.prompt {
			t.Errorf("%s %s: got %q, %v\nwant %q", w.tmpl, w.conv, got, err, w.prompt)
		}
	}
}

// Whitespace control as Python's Jinja applies it with trim_blocks and
// lstrip_blocks (outputs from jinja2 3.1.6): the engine alone gets the
// second and third wrong, stripping the newline after {{ x }}.
func TestWhitespaceControl(t *testing.T) {
	for src, want := range map[string]string{
		"{% if true -%} {{ x }}\n{% endif -%}|": "A\n|",
		"{% if true %}{{ x }}\n{% endif -%}|":   "A\n|",
		"{% if true %}{{ x }}\n{% endif %}|":    "A\n|",
		"{{ x }}\n\n{% if true -%}{% endif %}|": "A\n\n|",
		"  {% if true %}\n  a\n  {% endif %}\n  b {% if true %} c{% endif %}\n{# c #}\n  {#- x -#}  y 'q' \\ {% raw %}{{ z }}{% endraw %}": "  a\n  b  cy 'q' \\ {{ z }}",
		"{%+ if true %}\n{% endif +%}\n.": "\n.",
		"{{- x -}}  \n {{ x }}":           "AA",
	} {
		tm, err := Compile("snippet", src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		out, err := tm.tmpl.RenderValues(map[string]jinja.Value{"x": jinja.NewString("A")})
		if err != nil || out != want {
			t.Errorf("%q: got %q, %v; want %q", src, out, err, want)
		}
	}
}

// A template that cannot be compiled or rendered is an *Error naming the
// template and the construct.
func TestErrorsNameTheConstruct(t *testing.T) {
	msgs := []backends.Message{{Role: "user", Content: "x"}}
	for src, construct := range map[string]string{
		"{% weird %}": `unknown statement "weird"`,
		// The line is the template's own, whitespace control and comments
		// notwithstanding.
		"{# c\n\n #}\n  {%- if x -%}\n\n\n{% endif %}\n{% weird %}": `line 8: unknown statement "weird"`,
		"{{ messages | wordwrap(3) }}":                              `unknown filter "wordwrap"`,
		"{{ messages[0].content is nosuchtest }}":                   `unknown test "nosuchtest"`,
		"{{ raise_exception('roles must alternate') }}":             "roles must alternate",
		"{{ strftime_now('%Q') }}":                                  "%Q",
		"{% if messages %}":                                         "if",
		"{{ messages ":                                              "not closed",
	} {
		tm, err := Compile("model.gguf", src)
		if err == nil {
			_, err = tm.Render(Input{Messages: msgs, AddGenerationPrompt: true})
		}
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), construct) || !strings.HasPrefix(err.Error(), "model.gguf: ") {
			t.Errorf("%q: err = %v, want an *Error naming model.gguf and %s", src, err, construct)
		}
	}
}

// strftime agrees with C's strftime in the C locale (Python's time.strftime
// on glibc gave the expected strings).
func TestStrftime(t *testing.T) {
	tm := time.Date(2026, 3, 5, 14, 7, 9, 0, time.UTC)
	for format, want := range map[string]string{
		"%a %A %b %B %d %e %H %I %j %m %M %p %S %y %Y %F %T %u %w %%": "Thu Thursday Mar March 05  5 14 02 064 03 07 PM 09 26 2026 2026-03-05 14:07:09 4 4 %",
		"%-d %-m %-H": "5 3 14",
	} {
		if got, err := strftimeChecked(tm, format); err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", format, got, err, want)
		}
	}
}

// StepFun's template (found by its tool preamble) gets every message's
// content trimmed first, as llama.cpp's workaround::trim_all_content does;
// other templates get the content as sent.
func TestTrimContentForStepFun(t *testing.T) {
	msgs := []backends.Message{{Role: "user", Content: " a \n"}, {Role: "assistant", Content: "\tb"}}
	for src, want := range map[string]string{
		"{# You have access to the following functions in JSONSchema format #}{% for m in messages %}[{{ m.content }}]{% endfor %}": "[a][b]",
		"{% for m in messages %}[{{ m.content }}]{% endfor %}":                                                                      "[ a \n][\tb]",
	} {
		tm, err := Compile("t", src)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tm.Render(Input{Messages: msgs}); err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", src, got, err, want)
		}
	}
}
