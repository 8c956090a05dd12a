package activities

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/glossobench/glossobench/backends/registry"
	"github.com/glossobench/glossobench/infra/config"
	"github.com/glossobench/glossobench/infra/runfiles"
	"github.com/glossobench/glossobench/infra/store"
)

// modelIdentity records what is measured (spec §5, §8): a GGUF file's
// SHA-256, so swapping the weights behind one path changes the pins; for a
// server, the model it reports serving and model.revision. A server that
// cannot be asked is a note, not an error: Prepare may run where the
// inference workers' server is not reachable.
func modelIdentity(ctx context.Context, m config.Model) (ModelIdentity, error) {
	kind, _, _ := strings.Cut(m.Spec, ":")
	id := ModelIdentity{Backend: kind, Revision: m.Revision}
	if path, ok := registry.GGUFPath(m.Spec); ok { // the file, not its ?ctx= options
		sum, err := config.FileSHA256(path)
		if err != nil {
			return id, err
		}
		id.File, id.SHA256 = filepath.Base(path), sum
		return id, nil
	}
	base := strings.TrimPrefix(m.Spec, "openai:")
	name, err := servedModel(ctx, base, m.Name, os.Getenv(m.APIKeyEnv))
	if err != nil {
		id.Note = "server model name not recorded: " + err.Error()
	}
	id.ServerModel = name
	return id, nil
}

// otherModel says how two identities of a run's model differ, or "" when
// they may be the same model: the weights' SHA-256, the model a server
// reports and the revision are compared where both sides recorded them (a
// file's name is not the model).
func otherModel(was, now ModelIdentity) string {
	var diff []string
	if was.Backend != now.Backend {
		diff = append(diff, fmt.Sprintf("backend %s, now %s", was.Backend, now.Backend))
	}
	if was.SHA256 != "" && now.SHA256 != "" && was.SHA256 != now.SHA256 {
		diff = append(diff, fmt.Sprintf("sha256 %s, now %s", was.SHA256, now.SHA256))
	}
	if was.ServerModel != "" && now.ServerModel != "" && was.ServerModel != now.ServerModel {
		diff = append(diff, fmt.Sprintf("server model %s, now %s", was.ServerModel, now.ServerModel))
	}
	if was.Revision != now.Revision {
		diff = append(diff, fmt.Sprintf("revision %q, now %q", was.Revision, now.Revision))
	}
	return strings.Join(diff, "; ")
}

// changeModel starts the run's unfinished axes over on the model now
// served: an axis is finished once its scores are written, and keeps them;
// every other axis moves to a new checkpoint generation, so none of the
// earlier model's answers or ratings count for it. A finished run has no
// unfinished axis to start over: it is refused.
func (a *Activities) changeModel(ctx context.Context, st store.Store, run string, plan Plan, now ModelIdentity, why string) (Plan, error) {
	if ok, err := st.Exists(ctx, runfiles.ResultKey(run)); err != nil {
		return Plan{}, err
	} else if ok {
		return Plan{}, ConfigError("run %s is finished (its result.json exists) on other weights (%s): a new model is a new run; pick another run id", run, why)
	}
	changes, err := st.List(ctx, runfiles.ModelChangesPrefix(run))
	if err != nil {
		return Plan{}, err
	}
	c := ModelChange{N: len(changes) + 1, Was: plan.ModelIdentity, Now: now}
	for _, ax := range plan.Axes {
		scored, err := st.Exists(ctx, runfiles.ScoresKey(run, ax.Name))
		if err != nil {
			return Plan{}, err
		}
		if scored {
			c.Kept = append(c.Kept, ax.Name)
		} else {
			c.StartedOver = append(c.StartedOver, ax.Name)
		}
	}
	c.Note = fmt.Sprintf("the model changed when the run was resumed with --allow-new-model (%s): %s started over on the new model", why, cmp.Or(strings.Join(c.StartedOver, ", "), "none"))
	if len(c.Kept) > 0 {
		c.Note += fmt.Sprintf("; %s were scored on the earlier model and are kept, so this run's axes come from two models", strings.Join(c.Kept, ", "))
	}
	if err := putJSON(ctx, st, runfiles.ModelChangeKey(run, c.N), c); err != nil {
		return Plan{}, err
	}
	// This worker's copy of the run's manifest predates the change.
	a.forgetRun(run)
	if err := applyModelChanges(ctx, st, run, &plan); err != nil {
		return Plan{}, err
	}
	return plan, nil
}

// applyModelChanges brings a run's plan (as its manifest recorded it) up to
// its model changes, in order: the identity measured now, each started-over
// axis's generation, and a note per change.
func applyModelChanges(ctx context.Context, st store.Store, run string, plan *Plan) error {
	keys, err := st.List(ctx, runfiles.ModelChangesPrefix(run))
	if err != nil {
		return err
	}
	for _, k := range keys {
		var c ModelChange
		if err := getJSON(ctx, st, k, &c); err != nil {
			return err
		}
		plan.ModelIdentity = c.Now
		for i := range plan.Axes {
			if slices.Contains(c.StartedOver, plan.Axes[i].Name) {
				plan.Axes[i].Generation = c.N
			}
		}
		plan.ModelChanges = append(plan.ModelChanges, c.Note)
	}
	return nil
}

// servedModel asks an OpenAI-compatible server's /v1/models which model it
// serves: the configured name when it is listed, else the only one listed.
func servedModel(ctx context.Context, base, want, key string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	url := strings.TrimSuffix(base, "/")
	if !strings.HasSuffix(url, "/v1") {
		url += "/v1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/models", nil)
	if err != nil {
		return "", err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("GET /v1/models: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /v1/models: %s", resp.Status)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list); err != nil {
		return "", fmt.Errorf("GET /v1/models: %w", err)
	}
	for _, d := range list.Data {
		if d.ID == want && want != "" {
			return d.ID, nil
		}
	}
	if len(list.Data) == 1 {
		return list.Data[0].ID, nil
	}
	return "", fmt.Errorf("GET /v1/models lists %d models, none named %q (set model.name)", len(list.Data), want)
}
