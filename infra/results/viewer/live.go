package viewer

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"
)

// LiveRun is a run going on, as its workflow reports it.
type LiveRun struct {
	RunID      string
	WorkflowID string
	Started    time.Time
	Stage      string // the run's stage (prepare, dedup, an axis, aggregate, ...)
	Axes       []LiveAxis
	UIURL      string // the run in the Temporal UI, "" when unknown
	Err        string // why the progress could not be read
}

// LiveAxis is an axis of a LiveRun: its stage and items done of total.
type LiveAxis struct {
	Axis        string
	Stage       string
	Done, Total int // as the progress query reports them (Done moves a shard at a time)
	// Checkpointed are the answers in the axis's checkpoints in the store,
	// which move a checkpoint at a time; filled in by the viewer.
	Checkpointed int
}

// Live lists the runs going on: the viewer's link to the workflows'
// namespace (cmd/glossobench implements it over a Temporal client and the
// workflows' progress query; this package knows nothing of Temporal).
type Live interface {
	Running(ctx context.Context) ([]LiveRun, error)
	Describe() string // the namespace and address, for the page
}

// WithLive makes the viewer list the runs l reports on /live and the runs page.
func (s *Server) WithLive(l Live) *Server {
	s.live = l
	return s
}

// liveRefresh is how often the live page reloads itself, in seconds.
const liveRefresh = 2

// liveRuns is what the live page and the runs page show of the runs going on.
func (s *Server) liveRuns(ctx context.Context) ([]LiveRun, string) {
	if s.live == nil {
		return nil, ""
	}
	runs, err := s.live.Running(ctx)
	if err != nil {
		return nil, err.Error()
	}
	slices.SortFunc(runs, func(a, b LiveRun) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return strings.Compare(a.RunID, b.RunID)
	})
	return runs, ""
}

func (s *Server) livePage(w http.ResponseWriter, r *http.Request) {
	data := map[string]any{"On": s.live != nil, "Refresh": liveRefresh}
	if s.live != nil {
		data["Namespace"] = s.live.Describe()
		runs, err := s.liveRuns(r.Context())
		for i := range runs {
			for j := range runs[i].Axes {
				ax := &runs[i].Axes[j]
				// An axis's store objects may not exist yet: none checkpointed.
				ax.Checkpointed, _ = checkpointed(r.Context(), s.st, runs[i].RunID, ax.Axis)
			}
		}
		data["Runs"], data["Err"] = runs, err
	}
	s.render(w, "live.html", data)
}
