package reproduce

import (
	"strings"
	"testing"

	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/scorers"
)

func f(x float64) *float64 { return &x }

func result(knowledge, mt, ms float64) *runfiles.Result {
	r := &runfiles.Result{BenchVersion: "glossobench-v1", ConfigHash: "c", PluginVersions: map[string]string{"knowledge": "1"},
		ModelIdentity: &runfiles.ModelIdentity{Backend: "gguf", SHA256: "aaa"}, Axes: map[string]runfiles.AxisReport{}}
	r.Axes["knowledge"] = runfiles.AxisReport{AxisResult: scorers.AxisResult{Score: f(knowledge), CI95: &[2]float64{0.4, 0.6}}}
	r.Axes["mt"] = runfiles.AxisReport{AxisResult: scorers.AxisResult{Score: f(mt)}}
	r.Summary.MSPublic, r.Summary.MSCI95 = f(ms), &[2]float64{0.3, 0.7}
	return r
}

// TestRerunVerdicts: spec §5, a rerun's headline inside the earlier run's
// CI is reproduced, outside it non-determinism; without a CI only the same
// number reproduces; other pins give no verdict at all.
func TestRerunVerdicts(t *testing.T) {
	checks, err := Compare(result(0.5, 0.2, 0.5), result(0.65, 0.2, 0.55))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range checks {
		got = append(got, c.Name+" "+c.Verdict)
	}
	if strings.Join(got, ", ") != "knowledge NON-DETERMINISM, mt reproduced, ms_public reproduced" {
		t.Errorf("verdicts %v", got)
	}
	other := result(0.5, 0.2, 0.5)
	other.ModelIdentity.SHA256 = "bbb"
	if _, err := Compare(result(0.5, 0.2, 0.5), other); err == nil || !strings.Contains(err.Error(), `model_sha256 "aaa" vs "bbb"`) {
		t.Errorf("other weights: %v", err)
	}
}
