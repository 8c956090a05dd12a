package runfiles

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/store"
	"github.com/glossobench/glossobench/scorers"
)

// whole is what EachJSONL reads of a line for the field "audit".
type whole struct {
	Audit []scorers.AuditRow `json:"audit"`
}

// readBoth reads data with scanField and with ScanJSONL into whole.
func readBoth(data string) (field, all [][]scorers.AuditRow, fieldErr, allErr error) {
	fieldErr = scanField(strings.NewReader(data), "f.jsonl", "audit", func(rows []scorers.AuditRow) error {
		field = append(field, rows)
		return nil
	})
	allErr = ScanJSONL(strings.NewReader(data), "f.jsonl", func(_ int, w whole) error {
		all = append(all, w.Audit)
		return nil
	})
	return field, all, fieldErr, allErr
}

func sameReading(t *testing.T, name, data string) {
	t.Helper()
	field, all, fieldErr, allErr := readBoth(data)
	// A line that is no object names the Go type it does not fit, and
	// the two read into different types.
	typeName := strings.NewReplacer(`struct { Field []scorers.AuditRow "json:\"audit\"" }`, "T", "runfiles.whole", "T")
	if typeName.Replace(fmt.Sprint(fieldErr)) != typeName.Replace(fmt.Sprint(allErr)) {
		t.Errorf("%s: %q\nEachJSONLField error %v\nEachJSONL error      %v", name, data, fieldErr, allErr)
		return
	}
	if !reflect.DeepEqual(field, all) {
		t.Errorf("%s: %q\nEachJSONLField %v\nEachJSONL      %v", name, data, field, all)
	}
}

const scoresLine = `{"item_id":"syn/s/1","source":"subj1","lang":"ms","score":0,"rating":0.23688281808991013,"label":false,` +
	`"fields":{"acc":0,"acc_norm":0,"cloze_pred":"A"},` +
	`"audit":[{"detector":"cloze_confidence","rating":0.6439142598879724,"label":false,"tags":{"source":"subj1"}}]}`

// A scores line as Score writes it takes the quick path: the field's value
// is found in place.
func TestFieldValueOfAScoresLine(t *testing.T) {
	v, ok := fieldValue([]byte(scoresLine), "audit")
	want := scoresLine[strings.Index(scoresLine, `[{"detector"`) : len(scoresLine)-1]
	if !ok || string(v) != want {
		t.Errorf("fieldValue = %q, %v; want %q, true", v, ok, want)
	}
}

// EachJSONLField reads what EachJSONL reads, and refuses what it refuses
// with the same error, on lines that exercise the splitting: the field
// absent, null, repeated (the last counts), named in another case or with
// an escape, nested in another field's object, after strings holding
// quotes, brackets and backslashes; white space between tokens; lines that
// are no object, do not close, or whose field has the wrong type.
func TestEachJSONLFieldAsEachJSONL(t *testing.T) {
	row := `{"detector":"d","rating":0.5,"label":true,"tags":{"source":"s"}}`
	other := `{"detector":"e","rating":1,"label":false,"tags":{"source":"t","register":"r"}}`
	for name, data := range map[string]string{
		"scores lines":    scoresLine + "\n" + strings.Replace(scoresLine, "subj1", "subj2", -1) + "\n",
		"no field":        `{"item_id":"a","score":1}` + "\n",
		"empty object":    `{}` + "\n" + ` { } ` + "\n",
		"null":            `{"audit":null}`,
		"empty list":      `{"audit":[]}`,
		"repeated":        `{"audit":[` + row + `],"x":1,"audit":[` + other + `]}`,
		"repeated badly":  `{"audit":"x","audit":[` + row + `]}`,
		"other case":      `{"Audit":[` + row + `]}` + "\n" + `{"audit":[` + row + `],"AUDIT":[` + other + `]}`,
		"escaped key":     `{"aud\u0069t":[` + row + `]}`,
		"escaped key 2":   `{"audit":[` + row + `],"aud\u0069t":null}`,
		"nested":          `{"fields":{"audit":[` + other + `]},"audit":[` + row + `]}` + "\n" + `{"fields":{"audit":[` + other + `]}}`,
		"tricky strings":  `{"item_id":"a\"}{,[\\","x":"]}\\\\","audit":[` + row + `],"y":"\"audit\":[]"}`,
		"white space":     "{ \"a\" : [ 1 , { \"b\" : \"}\" } ] ,\t\"audit\" :\r[" + row + " ] , \"z\" : true }",
		"literals":        `{"a":true,"b":false,"c":null,"d":-1.5e3,"audit":[` + row + `],"e":0}`,
		"field last":      `{"a":{"b":[[],{}]},"audit":[` + row + `]}`,
		"no object":       `[1,2]` + "\n",
		"unclosed":        `{"audit":[` + row + `]` + "\n",
		"unclosed inside": `{"a":{"b":1},"audit":[` + row + `]` + "\n",
		"wrong type":      `{"audit":"none"}` + "\n",
		"wrong row type":  `{"item_id":"a"}` + "\n" + `{"audit":[{"detector":"d","rating":"high"}]}` + "\n",
		"two values":      `{"audit":[]} {"audit":[]}`,
		"trailing comma":  `{"audit":[],}`,
		"missing value":   `{"a":,"audit":[]}`,
		"mismatched":      `{"a":[1},"audit":[]}`,
		"bare key":        `{audit:[]}`,
		"extra brace":     `{"audit":[]}}`,
	} {
		sameReading(t, name, data)
	}
}

// The same on random lines: objects of random keys (the field's name in
// several spellings among them) whose values nest objects, lists, numbers,
// literals and strings full of quotes, backslashes and brackets. One line
// in five has a byte overwritten; a line so broken that EachJSONL refuses
// and EachJSONLField reads (a break inside well-formed quotes and
// brackets, see there) is counted, every other is read alike.
func TestEachJSONLFieldRandomLines(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lax := 0
	keys := []string{"audit", "Audit", "item_id", "fields", "aud\\u0069t", "x\\\"y", "a{", "]"}
	pieces := []string{`"`, `\\`, `\"`, `{`, `}`, `[`, `]`, `,`, `:`, `a`, `é`, `\u00e9`, ` `}
	str := func() string {
		var b strings.Builder
		for range r.IntN(6) {
			p := pieces[r.IntN(len(pieces))]
			if p == `"` {
				p = `\"` // escaped, so the string stays valid
			}
			b.WriteString(p)
		}
		return `"` + b.String() + `"`
	}
	var value func(depth int) string
	value = func(depth int) string {
		switch k := r.IntN(7); {
		case k == 0 && depth < 3:
			var parts []string
			for range r.IntN(4) {
				parts = append(parts, str()+":"+value(depth+1))
			}
			return "{" + strings.Join(parts, ",") + "}"
		case k == 1 && depth < 3:
			var parts []string
			for range r.IntN(4) {
				parts = append(parts, value(depth+1))
			}
			return "[" + strings.Join(parts, " , ") + "]"
		case k == 2:
			return []string{"true", "false", "null", "-0.5", "12e-3", "7"}[r.IntN(6)]
		case k == 3:
			return `[{"detector":"d","rating":` + fmt.Sprint(r.Float64()) + `,"label":true,"tags":{"source":` + str() + `}}]`
		}
		return str()
	}
	for i := range 3000 {
		var parts []string
		for range r.IntN(5) {
			parts = append(parts, `"`+keys[r.IntN(len(keys))]+`":`+value(0))
		}
		line := "{" + strings.Join(parts, ",") + "}"
		if i%5 == 4 {
			b := []byte(line)
			b[r.IntN(len(b))] = `{}[]",:\ x`[r.IntN(10)]
			line = string(b)
		}
		valid := json.Valid([]byte(line))
		if !valid && i%5 != 4 {
			t.Fatalf("generated an invalid line %q", line)
		}
		if !valid {
			if _, _, fieldErr, allErr := readBoth(line); fieldErr == nil && allErr != nil {
				lax++
				continue
			}
		}
		sameReading(t, fmt.Sprint("line ", i), line)
	}
	t.Logf("%d of 600 broken lines read where EachJSONL refuses them", lax)
}

// EachJSONLField reads a stored file, and says when it is missing.
func TestEachJSONLFieldInTheStore(t *testing.T) {
	st, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := ScoresKey("r", "knowledge")
	if err := st.Put(ctx, key, []byte(scoresLine+"\n"+`{"item_id":"b"}`+"\n")); err != nil {
		t.Fatal(err)
	}
	var got [][]scorers.AuditRow
	err = EachJSONLField(ctx, st, key, "audit", func(rows []scorers.AuditRow) error {
		got = append(got, rows)
		return nil
	})
	if err != nil || len(got) != 2 || len(got[0]) != 1 || got[0][0].Tags["source"] != "subj1" || got[1] != nil {
		t.Errorf("read %v, %v", got, err)
	}
	if err := EachJSONLField(ctx, st, ScoresKey("r", "nlu"), "audit", func([]scorers.AuditRow) error { return nil }); err == nil {
		t.Error("a missing file read without an error")
	}
}
