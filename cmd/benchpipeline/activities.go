package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
)

// activitySpan is one activity attempt of the run, as its history has it.
type activitySpan struct {
	summary     string // "infer knowledge shard 1/2", "audit nlu", ...
	start, stop time.Time
}

// runActivities reads every workflow's history on the dev server at addr
// (the run's EvalRun and its children: the server is the run's own) and
// returns the activities' spans, from started to closed.
func runActivities(addr string) ([]activitySpan, error) {
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: "default"})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []activitySpan
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", NextPageToken: token})
		if err != nil {
			return nil, err
		}
		for _, e := range resp.GetExecutions() {
			ex := e.GetExecution()
			scheduled := map[int64]string{}
			started := map[int64]time.Time{}
			it := c.GetWorkflowHistory(ctx, ex.GetWorkflowId(), ex.GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				ev, err := it.Next()
				if err != nil {
					return nil, err
				}
				at := ev.GetEventTime().AsTime()
				switch ev.GetEventType() {
				case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
					var s string
					if p := ev.GetUserMetadata().GetSummary(); p != nil {
						_ = converter.GetDefaultDataConverter().FromPayload(p, &s)
					}
					scheduled[ev.GetEventId()] = cmpOr(s, ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName())
				case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
					started[ev.GetActivityTaskStartedEventAttributes().GetScheduledEventId()] = at
				}
				var sched int64
				switch {
				case ev.GetActivityTaskCompletedEventAttributes() != nil:
					sched = ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()
				case ev.GetActivityTaskFailedEventAttributes() != nil:
					sched = ev.GetActivityTaskFailedEventAttributes().GetScheduledEventId()
				case ev.GetActivityTaskCanceledEventAttributes() != nil:
					sched = ev.GetActivityTaskCanceledEventAttributes().GetScheduledEventId()
				case ev.GetActivityTaskTimedOutEventAttributes() != nil:
					sched = ev.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()
				}
				if sched != 0 {
					out = append(out, activitySpan{scheduled[sched], started[sched], at})
				}
			}
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	slices.SortFunc(out, func(a, b activitySpan) int { return a.start.Compare(b.start) })
	return out, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// writeActivities writes the spans as CSV, in seconds from t0 (the first
// completion request in).
func writeActivities(path string, t0 time.Time, spans []activitySpan) error {
	var b strings.Builder
	b.WriteString("start_s,end_s,activity\n")
	for _, s := range spans {
		fmt.Fprintf(&b, "%.3f,%.3f,%s\n", s.start.Sub(t0).Seconds(), s.stop.Sub(t0).Seconds(), s.summary)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
