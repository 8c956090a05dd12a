package scorers

import "testing"

// MeanOf tiers an axis as spec §2 does: weight 0 is in no mean, whatever
// its tier; a selfbuilt axis is in ms_experimental only; the rest (public,
// or the tier left out) in ms_public.
func TestMeanOf(t *testing.T) {
	for _, c := range []struct {
		weight float64
		tier   string
		want   string
	}{
		{1, TierPublic, InMSPublic},
		{1, "", InMSPublic},
		{2.5, TierSelfbuilt, InMSExperimental},
		{0, TierPublic, InNoMean},
		{0, TierSelfbuilt, InNoMean},
	} {
		if got := MeanOf(c.weight, c.tier); got != c.want {
			t.Errorf("MeanOf(%g, %q) = %q, want %q", c.weight, c.tier, got, c.want)
		}
	}
}
