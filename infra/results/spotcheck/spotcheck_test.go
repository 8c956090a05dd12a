package spotcheck

import "testing"

func TestWorksheetCellsAreNotFormulas(t *testing.T) {
	if got := cell("=HYPERLINK(\"x\")"); got != "'=HYPERLINK(\"x\")" {
		t.Errorf("cell = %q", got)
	}
	if got := cell("Soalan"); got != "Soalan" {
		t.Errorf("cell = %q", got)
	}
}
