package viewer

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/scorers"
)

// TestDecodeScoreLineAsEncodingJSON: decodeScoreLine gives what
// json.Unmarshal gives, error or not, on records as Score writes them and on
// lines it must hand back to encoding/json.
func TestDecodeScoreLineAsEncodingJSON(t *testing.T) {
	var lines []string
	for i, sc := range []scorers.ItemScore{
		{ItemID: "ds/1", Score: 1, Rating: 0.93, Label: true},
		{ItemID: "ds/2", Source: "human", Lang: "ms", Score: 0.5, Flagged: "low_conf",
			Fields: map[string]any{"parse_fail": true, "reply": `a "quoted" }] reply {[`, "nested": map[string]any{"parse_fail": false}}},
		{ItemID: `ds/"3"`, Score: -2.5e-7, Fields: map[string]any{"parse_fail": false}},
		{ItemID: "ds/4", Flagged: "parse_fail", Audit: []scorers.AuditRow{{}, {}}, Fields: map[string]any{"x": []any{1, "}", nil}}},
		{ItemID: "ds/5 ünï", Score: 1e300},
	} {
		b, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(i, err)
		}
		lines = append(lines, string(b), " "+string(b)+"\r\n")
	}
	lines = append(lines,
		`{}`, `{"item_id":null,"score":1}`, `{"item_id":"a","score":null}`, `{"Item_ID":"b","SCORE":2}`,
		`{"item_id":"c","fields":{"Parse_Fail":true}}`, `{"item_id":"d","fields":null}`, `{"item_id":"e","fields":{"parse_fail":1}}`,
		`{"item_id":"f","score":"1"}`, `{"item_id":"g","score":1e400}`, `{"item_id":"h","score":1,"item_id":"h2"}`,
		`{"item_id":"i","score":1`, `{"item_id":"j","score":1}x`, `{"item_id":"k","audit":[{"a":"]"}],"score":3}`,
		`{"item_\u0069d":"l"}`, `{"item_id":"m\u00e9"}`, `[1]`, ``, `{"item_id":"n" "score":1}`, `{"item_id":"o",}`,
		`{"item_id":"p","rating":tru,"score":1}`,
	)
	for _, line := range lines {
		var want, got scoreLine
		wantErr := json.Unmarshal([]byte(line), &want)
		gotErr := decodeScoreLine([]byte(line), &got)
		if (wantErr == nil) != (gotErr == nil) || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %+v, %v\nwant %+v, %v", line, got, gotErr, want, wantErr)
		}
	}
	// Inside an object it does not read, a malformed value is matched up,
	// not validated (topFields): the line's own fields still decode.
	var sl scoreLine
	if err := decodeScoreLine([]byte(`{"item_id":"q","audit":[{"rating":tru}],"score":1}`), &sl); err != nil || sl.ItemID != "q" || sl.Score != 1 {
		t.Errorf("%+v, %v", sl, err)
	}
}

// TestDecodeUsageLineAsEncodingJSON: decodeUsageLine gives what
// json.Unmarshal gives on checkpoint records and on odd lines.
func TestDecodeUsageLineAsEncodingJSON(t *testing.T) {
	var lines []string
	for i, p := range []scorers.Prediction{
		{ItemID: "ds/1", Generations: []backends.Generation{{ID: "ds/1", Text: `say "}" and ]`, FinishReason: "stop"}},
			Usage: &backends.Usage{PromptTokens: 12, CompletionTokens: 3, Requests: 2, Retries: 1, LatencyMS: 250}},
		{ItemID: "ds/2", LogLiks: []backends.LLResult{{ID: "a", LogProb: -1.5}, {ID: "b", LogProb: -0.25}}},
		{ItemID: `ds/\3`, Usage: &backends.Usage{LatencyMS: 7}},
	} {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(i, err)
		}
		lines = append(lines, string(b))
	}
	lines = append(lines, `{"item_id":"a","usage":null}`, `{"item_id":"b","usage":{"latency_ms":"9"}}`,
		`{"item_id":"c","usage":{"prompt_tokens":1},"usage":{"latency_ms":2}}`, `{"item_id":"d","Usage":{"latency_ms":2}}`,
		`{"item_id":"e","usage":{"latency_ms":2}`, `{"item_id":"f","usage":{"latency_ms":2},"x":[}`)
	for _, line := range lines {
		var want, got usageLine
		wantErr := json.Unmarshal([]byte(line), &want)
		gotErr := decodeUsageLine([]byte(line), &got)
		if (wantErr == nil) != (gotErr == nil) || fmt.Sprintf("%s %+v", got.ItemID, got.Usage) != fmt.Sprintf("%s %+v", want.ItemID, want.Usage) {
			t.Errorf("%s:\n got %s %+v, %v\nwant %s %+v, %v", line, got.ItemID, got.Usage, gotErr, want.ItemID, want.Usage, wantErr)
		}
	}
}
