package nlg_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/glossobench/glossobench/backends"
	"github.com/glossobench/glossobench/backends/metricx"
	"github.com/glossobench/glossobench/scorers"
	"github.com/glossobench/glossobench/scorers/nlg"
	"github.com/glossobench/glossobench/scorers/scorerstest"
)

// The NLG axis with a real MetricX-24 client (backends/metricx, registered
// for tei+http specs here as the worker wiring, workflows/runner, registers it)
// against a fake text-embeddings-inference /predict server.

func init() {
	nlg.RegisterMetricXSpec(metricx.Family, func(spec string) (nlg.MetricX, error) {
		c, err := metricx.Open(spec)
		if err != nil {
			return nil, err
		}
		return c, nil
	})
}

func teiConfig(spec string) scorers.AxisConfig {
	return scorers.AxisConfig{
		BaseDir:  "../../testdata/nlg",
		Options:  map[string]any{"metricx": spec},
		Datasets: []scorers.DatasetConfig{{Name: "flores_en_id", Path: "flores200_devtest_en_to_ind_Latn.sample.jsonl", Format: nlg.FormatSeaHelm}},
	}
}

// fakeTEI scores an input 20 when its text is in wrong, else 2, and counts
// requests.
type fakeTEI struct {
	mu       sync.Mutex
	requests int
	inputs   []string
	wrong    map[string]bool
}

func (f *fakeTEI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Inputs [][]string `json:"inputs"`
	}
	if r.URL.Path != "/predict" || json.NewDecoder(r.Body).Decode(&req) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	out := make([][]map[string]any, len(req.Inputs))
	for i, in := range req.Inputs {
		f.inputs = append(f.inputs, in[0])
		score := 2.0
		if f.wrong[in[0]] {
			score = 20
		}
		out[i] = []map[string]any{{"score": score, "label": "LABEL_0"}}
	}
	json.NewEncoder(w).Encode(out)
}

func (f *fakeTEI) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// predictions answers every fourth item wrongly and the rest with the
// reference; wrong holds the MetricX inputs of the wrong answers.
func predictions(t *testing.T, items []scorers.Item) ([]scorers.Prediction, map[string]bool) {
	preds := make([]scorers.Prediction, len(items))
	wrong := map[string]bool{}
	for i, it := range items {
		var ex struct {
			Source string `json:"source_text"`
		}
		if err := json.Unmarshal(it.Extra, &ex); err != nil || ex.Source == "" {
			t.Fatalf("item %s extra: %v", it.ID, err)
		}
		hyp := it.References[0]
		if i%4 == 0 {
			hyp = "salah"
			wrong[metricx.Input(metricx.ModeHybrid, ex.Source, hyp, it.References[0])] = true
		}
		preds[i] = scorers.Prediction{ItemID: it.ID, Generations: []backends.Generation{{Text: "Terjemahan: " + hyp}}}
	}
	return preds, wrong
}

func TestMetricXServedByTEI(t *testing.T) {
	tei := &fakeTEI{}
	ts := httptest.NewServer(tei)
	defer ts.Close()
	spec := "tei+" + ts.URL + "?mode=hybrid&batch_size=16"

	items := scorerstest.Load(t, nlg.NewAxis(), teiConfig(spec))
	preds, wrong := predictions(t, items)
	tei.wrong = wrong
	if n := tei.count(); n != 0 {
		t.Fatalf("%d MetricX requests before scoring", n)
	}

	res, err := nlg.NewAxis().Score(items, preds, scorers.ScoreOptions{BootstrapResamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	if n := tei.count(); n != (len(items)+15)/16 {
		t.Errorf("%d requests for %d segments in batches of 16", n, len(items))
	}
	if len(tei.inputs) != len(items) {
		t.Errorf("%d inputs sent for %d items", len(tei.inputs), len(items))
	}
	nWrong := (len(items) + 3) / 4
	wantMean := (20*float64(nWrong) + 2*float64(len(items)-nWrong)) / float64(len(items))
	wantNorm := ((25-20)/25.0*float64(nWrong) + (25-2)/25.0*float64(len(items)-nWrong)) / float64(len(items))
	if got, _ := res.Secondary["metricx24"].(float64); math.Abs(got-wantMean) > 1e-12 {
		t.Errorf("metricx24 %v, want %v", res.Secondary["metricx24"], wantMean)
	}
	if got, _ := res.Secondary["metricx24_normalized"].(float64); math.Abs(got-wantNorm) > 1e-12 {
		t.Errorf("metricx24_normalized %v, want %v", res.Secondary["metricx24_normalized"], wantNorm)
	}
	if res.Items[0].Fields["metricx24"] != 20.0 || res.Items[1].Fields["metricx24"] != 2.0 {
		t.Errorf("item fields %v %v", res.Items[0].Fields["metricx24"], res.Items[1].Fields["metricx24"])
	}

	// The headline is chrF++, the same number as without MetricX.
	plain, _ := nlg.NewAxis().Load(teiConfig(""))
	base, err := nlg.NewAxis().Score(plain, preds, scorers.ScoreOptions{BootstrapResamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Metric != "chrf++" || res.Score == nil || *res.Score != *base.Score || res.Items[0].Score != base.Items[0].Score {
		t.Errorf("headline %s %v, want chrf++ %v", res.Metric, res.Score, *base.Score)
	}
	if !strings.Contains(strings.Join(res.Notes, "|"), "metricx24 ("+spec+") reported as secondary; headline is chrF++") {
		t.Errorf("notes %q", res.Notes)
	}
}

// A server that cannot be reached leaves chrF++ alone, with a note naming
// its URL; the axis does not fail.
func TestMetricXUnreachableIsANote(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	items := scorerstest.Load(t, nlg.NewAxis(), teiConfig("tei+"+url+"?max_retries=0"))
	preds, _ := predictions(t, items)
	res, err := nlg.NewAxis().Score(items, preds, scorers.ScoreOptions{BootstrapResamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(res.Notes, "|")
	t.Log(notes)
	if res.Score == nil || res.Metric != "chrf++" || res.Secondary["metricx24"] != nil ||
		!strings.Contains(notes, fmt.Sprintf("failed (metricx: POST %s/predict: ", url)) || !strings.Contains(notes, "chrF++ only") {
		t.Errorf("score %v, secondary %v, notes %q", res.Score, res.Secondary["metricx24"], notes)
	}
}

// A malformed spec is a config error when the items are loaded, before any
// inference is spent.
func TestMetricXBadSpecFailsLoad(t *testing.T) {
	_, err := nlg.NewAxis().Load(teiConfig("tei+http://127.0.0.1:8080?mode=reference"))
	if err == nil || !strings.Contains(err.Error(), `nlg: option metricx: metricx spec`) || !strings.Contains(err.Error(), "want hybrid or qe") {
		t.Errorf("err %v", err)
	}
	// A family nobody registered is left to scoring, which notes it.
	items := scorerstest.Load(t, nlg.NewAxis(), teiConfig("vllm+http://127.0.0.1:8080"))
	preds, _ := predictions(t, items)
	res, _ := nlg.NewAxis().Score(items, preds, scorers.ScoreOptions{BootstrapResamples: 10})
	if !strings.Contains(strings.Join(res.Notes, "|"), `no MetricX-24 client registered for "vllm+" specs (registered: tei)`) {
		t.Errorf("notes %q", res.Notes)
	}
}
