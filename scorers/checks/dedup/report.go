package dedup

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/glossobench/glossobench/scorers"
)

// Fingerprint identifies one corpus file as stored.
type Fingerprint struct {
	URI    string `json:"uri"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"` // of the stored (possibly compressed) bytes, lower-case hex
	// ETag is an S3 object's entity tag as listed (the MD5 of a single-part
	// upload, a hash of the part hashes otherwise); every ranged GET of the
	// screen required it (If-Match), so it names exactly the bytes screened.
	ETag string `json:"etag,omitempty"`
}

// String names the file and the bytes screened: by the S3 ETag the screen
// required when the file was listed with one, else by their SHA-256.
func (f Fingerprint) String() string {
	if f.ETag != "" {
		return fmt.Sprintf("%s (%d bytes, etag %s)", f.URI, f.Size, f.ETag)
	}
	return fmt.Sprintf("%s (%d bytes, sha256 %s)", f.URI, f.Size, f.SHA256)
}

// KeptSHA256 is the fingerprint of the exact scored subset: the lower-case
// hex SHA-256 of the kept item ids, sorted bytewise ascending, duplicates
// removed, joined by a single "\n" with no trailing newline (so the empty set
// hashes the empty string). The same as
//
//	printf '%s' "$(sort -u ids.txt)" | sha256sum   (with LC_ALL=C)
func KeptSHA256(keptIDs []string) string {
	ids := slices.Clone(keptIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	sum := sha256.Sum256([]byte(strings.Join(ids, "\n")))
	return hex.EncodeToString(sum[:])
}

// Drop is one item excluded from scoring.
type Drop struct {
	ItemID string `json:"item_id"`
	TaskID string `json:"task_id"`
	Axis   string `json:"axis,omitempty"`
	// Kind is the match kind, or KindTask when the item itself did not
	// match but another item of its task did (Via names it).
	Kind  string `json:"kind"`
	Via   string `json:"via,omitempty"`
	Match Match  `json:"match"` // the match that caused the drop (Via's when Kind is task)
}

// AxisReport is the contamination view of one axis.
type AxisReport struct {
	Axis              string `json:"axis"`
	Items             int    `json:"items"`
	Kept              int    `json:"kept"`
	Dropped           int    `json:"dropped"`
	Tasks             int    `json:"tasks"`
	ContaminatedTasks int    `json:"contaminated_tasks"`
	// ContaminationRate is contaminated tasks / tasks; nil without a corpus,
	// which is not the same as a rate of 0.
	ContaminationRate *float64 `json:"contamination_rate"`
	ItemRate          *float64 `json:"item_rate"` // dropped items / items
}

// Report is the dedup outcome published in result.json.
type Report struct {
	NoCorpus   bool          `json:"no_corpus,omitempty"`
	Options    Options       `json:"options"`
	Corpus     []Fingerprint `json:"corpus"`
	Items      int           `json:"items"`
	Kept       int           `json:"kept"`
	Dropped    int           `json:"dropped"`
	KeptSHA256 string        `json:"kept_sha256"`
	Axes       []AxisReport  `json:"axes"`
	Drops      []Drop        `json:"drops"`
	// KeptIDs are the ids to score, in input order.
	KeptIDs []string `json:"-"`
}

// DroppedIDs are the ids of the items the report drops.
func (r *Report) DroppedIDs() map[string]bool {
	out := map[string]bool{}
	for _, d := range r.Drops {
		out[d.ItemID] = true
	}
	return out
}

// TaskRates are the axes' task-level contamination rates (spec §0,
// principle 5: a task is contaminated when any of its items is).
func (r *Report) TaskRates() map[string]*float64 {
	out := map[string]*float64{}
	for _, ax := range r.Axes {
		out[ax.Axis] = ax.ContaminationRate
	}
	return out
}

// Summarize applies the hard exclusion: an item is dropped when it matched,
// or when any item with the same task id matched (an item without a task id
// is its own task). corpus empty means no corpus was screened: nothing is
// dropped and rates are nil. matches are as returned by MergeMatches; match
// ids that are not among items are ignored.
func Summarize(items []scorers.Item, matches []Match, corpus []Fingerprint, opt Options) Report {
	opt, _ = opt.withDefaults()
	rep := Report{NoCorpus: len(corpus) == 0, Options: opt, Corpus: corpus, Items: len(items)}
	if rep.Corpus == nil {
		rep.Corpus = []Fingerprint{}
	}
	taskOf := func(it scorers.Item) string {
		if it.TaskID != "" {
			return it.TaskID
		}
		return it.ID
	}
	byItem := map[string]Match{}
	for _, m := range matches {
		byItem[m.ItemID] = m
	}
	// The first matched item (in input order) of each task taints the task.
	taskHit := map[string]string{}
	if !rep.NoCorpus {
		for _, it := range items {
			if _, ok := byItem[it.ID]; ok {
				if _, seen := taskHit[taskOf(it)]; !seen {
					taskHit[taskOf(it)] = it.ID
				}
			}
		}
	}
	type axisAcc struct {
		rep   AxisReport
		tasks map[string]bool // task -> contaminated
	}
	var order []string
	axes := map[string]*axisAcc{}
	for _, it := range items {
		a := axes[it.Axis]
		if a == nil {
			a = &axisAcc{rep: AxisReport{Axis: it.Axis}, tasks: map[string]bool{}}
			axes[it.Axis] = a
			order = append(order, it.Axis)
		}
		a.rep.Items++
		task := taskOf(it)
		via, hit := taskHit[task]
		a.tasks[task] = a.tasks[task] || hit
		if !hit {
			a.rep.Kept++
			rep.KeptIDs = append(rep.KeptIDs, it.ID)
			continue
		}
		a.rep.Dropped++
		d := Drop{ItemID: it.ID, TaskID: task, Axis: it.Axis}
		if m, own := byItem[it.ID]; own {
			d.Kind, d.Match = m.Kind, m
		} else {
			d.Kind, d.Via, d.Match = KindTask, via, byItem[via]
		}
		rep.Drops = append(rep.Drops, d)
	}
	slices.Sort(order)
	for _, name := range order {
		a := axes[name]
		a.rep.Tasks = len(a.tasks)
		for _, bad := range a.tasks {
			if bad {
				a.rep.ContaminatedTasks++
			}
		}
		if !rep.NoCorpus {
			r := float64(a.rep.ContaminatedTasks) / float64(a.rep.Tasks)
			ir := float64(a.rep.Dropped) / float64(a.rep.Items)
			a.rep.ContaminationRate, a.rep.ItemRate = &r, &ir
		}
		rep.Axes = append(rep.Axes, a.rep)
	}
	if rep.Axes == nil {
		rep.Axes = []AxisReport{}
	}
	if rep.Drops == nil {
		rep.Drops = []Drop{}
	}
	rep.Kept = len(rep.KeptIDs)
	rep.Dropped = len(rep.Drops)
	rep.KeptSHA256 = KeptSHA256(rep.KeptIDs)
	return rep
}
