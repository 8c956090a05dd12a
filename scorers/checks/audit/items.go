package audit

import (
	"slices"
	"strings"

	"github.com/glossobench/glossobench/scorers"
)

// Pools gathers the audit rows of an axis's item scores into pools, one per
// detector and pooling column (a row's tag names its source in that pool),
// keeping each pool's rows in the order they were added, by column (a
// Table: about 12 bytes a row). The zero value is ready to use.
type Pools struct {
	index map[[2]string]int
	list  []*Pool
	tags  map[string]string // one copy of every tag string
}

// Pool is the rows of one detector pooled by one column: one measurement,
// the detector's rating.
type Pool struct {
	Detector, Column string
	Rows             Table
}

// Add adds one item's audit row to every pool its tags name; an empty tag
// leaves the row out of that column's pool.
func (ps *Pools) Add(r scorers.AuditRow) {
	if ps.index == nil {
		ps.index, ps.tags = map[[2]string]int{}, map[string]string{}
	}
	for col, tag := range r.Tags {
		if tag == "" {
			continue
		}
		k := [2]string{r.Detector, col}
		i, ok := ps.index[k]
		if !ok {
			i = len(ps.list)
			ps.index[k] = i
			ps.list = append(ps.list, &Pool{Detector: r.Detector, Column: col})
		}
		if t, ok := ps.tags[tag]; ok {
			tag = t
		} else {
			ps.tags[tag] = tag
		}
		ps.list[i].Rows.Add(r.Label, tag, r.Rating)
	}
}

// columnRank orders the pools of one detector: the source the axis pools
// by first, then finer or other tags.
var columnRank = map[string]int{"source": 0, "topic": 1, "register": 2, "judge": 3, "dataset": 4}

// Sorted returns the pools ordered by detector (as listed in detectors;
// unlisted ones after, by name) and column, so the order does not depend on
// the order rows came in.
func (ps *Pools) Sorted(detectors []string) []*Pool {
	rank := func(d string) int {
		if i := slices.Index(detectors, d); i >= 0 {
			return i
		}
		return len(detectors)
	}
	col := func(c string) int {
		if r, ok := columnRank[c]; ok {
			return r
		}
		return len(columnRank)
	}
	out := slices.Clone(ps.list)
	slices.SortStableFunc(out, func(a, b *Pool) int {
		if c := rank(a.Detector) - rank(b.Detector); c != 0 {
			return c
		}
		if c := strings.Compare(a.Detector, b.Detector); c != 0 {
			return c
		}
		if c := col(a.Column) - col(b.Column); c != 0 {
			return c
		}
		return strings.Compare(a.Column, b.Column)
	})
	return out
}
